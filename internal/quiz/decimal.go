package quiz

import (
	"math/big"
)

// decimals is how many decimals r needs (at most 12).
func decimals(r *big.Rat) int {
	for n := 0; n <= 12; n++ {
		if new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil))).IsInt() {
			return n
		}
	}
	return 12
}
