package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/lectern-lms/lectern/internal/apitest"
	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/lectern-lms/lectern/internal/store"
)

// TestListedUsersAsRead: a listing gives each user's name, username and
// email as a read does, whatever they hold (commas, digits, multi-byte
// characters, an empty username), unfiltered and filtered, on both
// databases.
func TestListedUsersAsRead(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := apitest.OpenStore(t, b)
			d, _, err := st.CreateDomain(ctx, "A")
			if err != nil {
				t.Fatal(err)
			}
			in := []lms.User{
				{Name: "Ann", Username: "ann", Email: "ann@example.com"},
				{Name: "3,4,Zoë", Username: "", Email: "z@example.com"},
				{Name: "", Username: "12,", Email: "n@example.com"},
				{Name: "李 小龙", Username: "li,long", Email: "li@example.com"},
				{Name: "Émile, Jr.", Username: "é", Email: "e,@example.com"},
			}
			want := map[int64]lms.User{}
			for _, u := range in {
				made, err := st.CreateUser(ctx, d.ID, u)
				if err != nil {
					t.Fatal(err)
				}
				made.CreatedAt = made.CreatedAt.UTC()
				want[made.ID] = made
			}
			for _, tc := range []struct {
				name string
				f    store.UserFilter
				p    store.Page
				n    int
			}{
				{"page", store.UserFilter{}, store.Page{Limit: 10}, 5},
				{"last page", store.UserFilter{}, store.Page{Offset: 2, Limit: 3}, 3},
				{"by email", store.UserFilter{Email: "example"}, store.Page{Limit: 10}, 5},
				{"by name", store.UserFilter{Name: "zo"}, store.Page{Limit: 10}, 1},
			} {
				got, total, err := st.ListUsers(ctx, d.ID, tc.f, tc.p)
				if err != nil || len(got) != tc.n {
					t.Fatalf("%s: %d users (total %d), %v; want %d", tc.name, len(got), total, err, tc.n)
				}
				for _, u := range got {
					w := want[u.ID]
					w.CreatedAt = u.CreatedAt // a listing leaves it zero
					if !reflect.DeepEqual(u, w) {
						t.Errorf("%s: listed %+v, want %+v", tc.name, u, w)
					}
				}
			}
		})
	}
}
