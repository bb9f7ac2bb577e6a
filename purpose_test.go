package lease_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// requireInvalidField asserts err is LS_INVALID_ARGUMENT naming field.
func requireInvalidField(t *testing.T, err error, field string) {
	t.Helper()
	requireCode(t, err, lease.CodeInvalidArgument, lease.ErrInvalidArgument)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, field, le.Field)
	assert.Contains(t, err.Error(), field)
}

func TestPurposeTextForms(t *testing.T) {
	for _, tc := range []struct {
		p     lease.Purpose
		valid bool
		text  string // String()
	}{
		{lease.Operation, true, "operation"},
		{lease.StateWrite, true, "state_write"},
		{lease.MigrationHandoff, true, "migration_handoff"},
		{0, false, "Purpose(0)"},
		{60000, false, "Purpose(60000)"},
		{65535, false, "Purpose(65535)"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			assert.Equal(t, tc.valid, tc.p.Valid())
			assert.Equal(t, tc.text, tc.p.String())
			b, err := tc.p.MarshalText()
			if !tc.valid {
				require.Nil(t, b)
				requireInvalidField(t, err, "purpose")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.text, string(b))
			var back lease.Purpose
			require.NoError(t, back.UnmarshalText(b))
			require.Equal(t, tc.p, back)
		})
	}
}

func TestParsePurpose(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want lease.Purpose // 0: must be rejected
	}{
		{"operation", lease.Operation},
		{"state_write", lease.StateWrite},
		{"migration_handoff", lease.MigrationHandoff},
		// The specification's CamelCase names.
		{"Operation", lease.Operation},
		{"StateWrite", lease.StateWrite},
		{"MigrationHandoff", lease.MigrationHandoff},
		// Case does not matter, nor do the word separators.
		{"OPERATION", lease.Operation},
		{"STATE_WRITE", lease.StateWrite},
		{"stateWrite", lease.StateWrite},
		{"state-write", lease.StateWrite},
		{"statewrite", lease.StateWrite},
		{"Migration_Handoff", lease.MigrationHandoff},
		// Not purposes.
		{"", 0},
		{"1", 0},
		{"write", 0},
		{"state write", 0},
		{" operation", 0},
		{"operation ", 0},
		{"operations", 0},
		{"Purpose(1)", 0},
		{"migration", 0},
	} {
		t.Run(tc.in, func(t *testing.T) {
			p, err := lease.ParsePurpose(tc.in)
			if tc.want == 0 {
				requireInvalidField(t, err, "purpose")
				require.Zero(t, p)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, p)
		})
	}
}

func TestPurposeUnmarshalTextInvalidChangesNothing(t *testing.T) {
	p := lease.StateWrite
	requireInvalidField(t, p.UnmarshalText([]byte("bogus")), "purpose")
	require.Equal(t, lease.StateWrite, p)
}

func TestPurposeJSON(t *testing.T) {
	type job struct {
		Name    string        `json:"name"`
		Purpose lease.Purpose `json:"purpose"`
	}
	t.Run("round trip", func(t *testing.T) {
		for _, p := range []lease.Purpose{lease.Operation, lease.StateWrite, lease.MigrationHandoff} {
			b, err := json.Marshal(job{"j", p})
			require.NoError(t, err)
			require.JSONEq(t, `{"name":"j","purpose":"`+p.String()+`"}`, string(b))
			var back job
			require.NoError(t, json.Unmarshal(b, &back))
			require.Equal(t, job{"j", p}, back)
		}
	})
	t.Run("CamelCase name", func(t *testing.T) {
		var j job
		require.NoError(t, json.Unmarshal([]byte(`{"purpose":"MigrationHandoff"}`), &j))
		require.Equal(t, lease.MigrationHandoff, j.Purpose)
	})
	t.Run("map key", func(t *testing.T) {
		b, err := json.Marshal(map[lease.Purpose]int{lease.StateWrite: 2, lease.Operation: 1})
		require.NoError(t, err)
		require.JSONEq(t, `{"operation":1,"state_write":2}`, string(b))
	})
	t.Run("invalid purpose does not marshal", func(t *testing.T) {
		_, err := json.Marshal(job{"j", 7})
		requireInvalidField(t, err, "purpose")
	})
	t.Run("unknown text does not unmarshal", func(t *testing.T) {
		var j job
		requireInvalidField(t, json.Unmarshal([]byte(`{"purpose":"reading"}`), &j), "purpose")
		require.Zero(t, j.Purpose)
	})
	t.Run("number does not unmarshal", func(t *testing.T) {
		var j job
		require.Error(t, json.Unmarshal([]byte(`{"purpose":1}`), &j))
		require.Zero(t, j.Purpose)
	})
}

func TestEndReasonString(t *testing.T) {
	for _, tc := range []struct {
		r    lease.EndReason
		want string
	}{
		{lease.EndExpired, "expired"},
		{lease.EndRevoked, "revoked"},
		{0, "EndReason(0)"},
		{9, "EndReason(9)"},
	} {
		assert.Equal(t, tc.want, tc.r.String())
	}
}

// TestUserDefinedPurposes defines a purpose: it is granted, used, refused
// on mismatch and audited exactly like a predefined one, parses from its
// text forms, and defining it again returns the same value.
func TestUserDefinedPurposes(t *testing.T) {
	billing, err := lease.NewPurpose("billing_run")
	require.NoError(t, err)
	again, err := lease.NewPurpose("billing_run")
	require.NoError(t, err)
	assert.Equal(t, billing, again, "defining twice is idempotent")
	assert.True(t, billing.Valid())
	assert.Equal(t, "billing_run", billing.String())
	for _, form := range []string{"billing_run", "billing-run", "BillingRun"} {
		p, err := lease.ParsePurpose(form)
		require.NoError(t, err, form)
		assert.Equal(t, billing, p)
	}
	b, err := json.Marshal(billing)
	require.NoError(t, err)
	assert.Equal(t, `"billing_run"`, string(b))

	s, _ := newService(t)
	l := grant(t, s, billing, time.Hour)
	_, err = s.Use(ctx, l.ID, billing)
	require.NoError(t, err)
	_, err = s.Use(ctx, l.ID, lease.Operation)
	requireCode(t, err, lease.CodePurposeMismatch, lease.ErrPurposeMismatch)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, billing, le.Actual)
	audit := s.Audit()
	assert.Equal(t, "granted for billing_run, used for operation", audit[len(audit)-1].Reason)
}

// TestNewPurposeRejectsBadNames checks names are validated and nothing is
// defined for them.
func TestNewPurposeRejectsBadNames(t *testing.T) {
	for _, name := range []string{"", "Billing", "1st", "_x", "a-b", "a b", "é", string(make([]byte, 65))} {
		p, err := lease.NewPurpose(name)
		requireInvalidField(t, err, "purpose")
		assert.Zero(t, p)
		_, err = lease.ParsePurpose(name)
		assert.Error(t, err, "%q was not defined", name)
	}
	assert.Panics(t, func() { lease.MustPurpose("Bad") })
	assert.Equal(t, lease.StateWrite, lease.MustPurpose("state_write"), "a predefined name returns the predefined purpose")
}
