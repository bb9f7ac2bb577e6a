package debugpage_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/debugpage"
	"github.com/leasehold/lease/lock"
)

// requireOperator stands for the service's own authentication.
func requireOperator(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pass, ok := r.BasicAuth(); !ok || pass != "s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func Example() {
	svc := lease.Must(lease.New())
	defer svc.Close()
	locks := lease.Must(lock.NewMemory(svc))

	mux := http.NewServeMux()
	page := debugpage.New(debugpage.Config{Service: svc, Locks: locks})
	mux.Handle("/debug/lease", requireOperator(page))

	req := httptest.NewRequest(http.MethodGet, "/debug/lease?format=json", nil)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	req.SetBasicAuth("ops", "s3cret")
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	// Output:
	// 401
	// 200 application/json
}
