package cert

import "testing"

func BenchmarkPDF(b *testing.B) {
	c, t := testCert("Ann Example"), NewTemplate("Plain")
	for b.Loop() {
		if _, err := PDF(c, t, "https://learn.example.com/verify/7K3M9QXRT2AB"); err != nil {
			b.Fatal(err)
		}
	}
}
