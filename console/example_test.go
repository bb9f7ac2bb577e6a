package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/console"
)

// isOperator stands for the embedding program's own authorization.
func isOperator(r *http.Request) bool { return r.Header.Get("X-Operator") == "yes" }

// An operator console mounted under /ops/, with actions on for operators
// only.
func ExampleNew() {
	svc, err := lease.New()
	if err != nil {
		panic(err)
	}
	defer svc.Close()
	mux := http.NewServeMux()

	rec := console.NewRecorder(svc.Clock())
	store, err := claim.NewMemory(svc)
	if err != nil {
		panic(err)
	}
	broker, err := claim.New(store, claim.WithObserver(rec))
	if err != nil {
		panic(err)
	}
	defer broker.Close()

	ops, err := console.New(console.Config{
		Service:   svc,
		Broker:    broker,
		Recorder:  rec,
		Actions:   true,
		Authorize: isOperator,
	})
	if err != nil {
		panic(err)
	}
	mux.Handle("/ops/", http.StripPrefix("/ops", ops))

	if _, err := broker.Enqueue(context.Background(), "emails", []byte(`{"to":"alice"}`)); err != nil {
		panic(err)
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "/ops/?format=json", nil))
	fmt.Println(w.Code, strings.Contains(w.Body.String(), `"emails"`))

	// Not an operator: refused, and nothing changes.
	w = httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/ops/action?op=pause&queue=emails", nil)
	mux.ServeHTTP(w, req)
	fmt.Println(w.Code)
	// Output:
	// 200 true
	// 403
}
