package cert

import (
	"context"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lectern-lms/lectern/internal/store"
)

// The JSON-LD contexts of an Open Badges 3.0 credential (Verifiable
// Credentials Data Model 2.0).
var obContext = []string{"https://www.w3.org/ns/credentials/v2", "https://purl.imsglobal.org/spec/ob/v3p0/context-3.0.3.json"}

// IssuerURL is the id of a domain's issuer profile: base/issuers/{domain}.
func IssuerURL(base string, domainID int64) string {
	return base + "/issuers/" + strconv.FormatInt(domainID, 10)
}

// VerifyURL is a certificate's public page and its credential id:
// base/verify/{code}.
func VerifyURL(base, code string) string { return base + "/verify/" + code }

// Credential returns the Open Badges 3.0 credential of a certificate as
// JSON-ready data (without the JWT registered claims).
func Credential(base string, c store.Certificate) map[string]any {
	issuer := IssuerURL(base, c.DomainID)
	narrative := "Completed every required lesson of the course."
	if c.Source == store.CertSourceManual {
		narrative = "Awarded by the issuer for the course."
	}
	achievementID := issuer + "#course-" + strconv.FormatInt(c.CourseID, 10)
	if c.CourseID == 0 {
		achievementID = VerifyURL(base, c.Code) + "#achievement"
	}
	return map[string]any{
		"@context":  obContext,
		"id":        VerifyURL(base, c.Code),
		"type":      []string{"VerifiableCredential", "OpenBadgeCredential"},
		"name":      c.CourseTitle,
		"issuer":    map[string]any{"id": issuer, "type": []string{"Profile"}, "name": c.IssuerName},
		"validFrom": c.IssuedAt.UTC().Format(time.RFC3339),
		"credentialSubject": map[string]any{
			"type": []string{"AchievementSubject"},
			"identifier": []map[string]any{{"type": "IdentityObject", "identityType": "name", "hashed": false,
				"identityHash": c.LearnerName}},
			"achievement": map[string]any{
				"id": achievementID, "type": []string{"Achievement"}, "name": c.CourseTitle,
				"description": "Completion of the course " + c.CourseTitle + ".",
				"criteria":    map[string]any{"narrative": narrative},
			},
		},
	}
}

// SignCredential returns a certificate's credential as a VC-JWT (Open
// Badges 3.0, section 8.2): the credential is the JWT payload, with iss,
// jti and nbf mirroring issuer.id, id and validFrom; signed EdDSA with
// the domain's current key, named by kid in the header.
func (i *Issuer) SignCredential(ctx context.Context, c store.Certificate) (string, error) {
	k, err := i.key(ctx, c.DomainID)
	if err != nil {
		return "", err
	}
	claims := jwt.MapClaims(Credential(i.base(), c))
	claims["iss"] = IssuerURL(i.base(), c.DomainID)
	claims["jti"] = VerifyURL(i.base(), c.Code)
	claims["nbf"] = c.IssuedAt.Unix()
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = k.kid
	return tok.SignedString(k.priv)
}
