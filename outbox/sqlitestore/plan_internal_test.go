package sqlitestore

import (
	"database/sql"
	"strings"
	"testing"
)

// TestQueryPlansUseIndexes: waiting deliveries cost rows and an index, not work per
// claim. The claim walks the due index (ordered by next attempt) and counts leases on
// the small in-flight index; NextDue reads the due index's first entry; the retention
// purge, pausing and recovering walk indexes of their own; no statement scans the
// deliveries table.
func TestQueryPlansUseIndexes(t *testing.T) {
	st := openTest(t, "plan.db", Options{})
	plan := func(query string, args ...any) string {
		lines, err := queryPlan(st.db, query, args...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	claim := plan(windowSQL, sql.Named("now", 1), sql.Named("next", 0), sql.Named("endpoint", ""), sql.Named("id", ""), sql.Named("scan", 4))
	if !strings.Contains(claim, "USING COVERING INDEX outbox_deliveries_due ((next_attempt_at,endpoint_id,id)>(?,?,?)") || strings.Contains(claim, "TEMP B-TREE") {
		t.Errorf("the claim's window does not walk the due index from its cursor alone:\n%s", claim)
	}
	meet := plan(meetSQL, sql.Named("now", 1), sql.Named("ids", `["ep"]`))
	if !strings.Contains(meet, "USING INDEX sqlite_autoindex_outbox_endpoints_1 (id=?)") {
		t.Errorf("the claim's look at its endpoints does not find them by id:\n%s", meet)
	}
	busy := plan(busySQL, `["ep"]`)
	if !strings.Contains(busy, "USING COVERING INDEX outbox_deliveries_leased (endpoint_id=?") {
		t.Errorf("the claim's lease counts do not walk the leased index:\n%s", busy)
	}
	lease := plan(leaseSQL, 1, "x", `["a"]`)
	if !strings.Contains(lease, "USING INDEX sqlite_autoindex_outbox_deliveries_1 (id=?)") {
		t.Errorf("lease plan does not look deliveries up by id:\n%s", lease)
	}
	next := plan(`SELECT min(next_attempt_at) FROM outbox_deliveries WHERE status = 'PENDING' AND lease_until IS NULL`)
	reap := plan(`SELECT id FROM outbox_deliveries WHERE lease_until IS NOT NULL AND lease_until < ? AND status = 'PENDING' ORDER BY lease_until LIMIT ?`, 1, 1)
	purge := plan(purgeDeliveriesSQL, 1, 1)
	waiting := plan(moveWaitingSQL, "FAILED", "paused", 1, "ep", "d")
	recover := plan(recoverSQL, 1, 1, "acct", "ep", 1)
	for name, c := range map[string]struct{ plan, index string }{
		"purge":   {purge, "outbox_deliveries_endpoint_listing"},
		"waiting": {waiting, "outbox_deliveries_endpoint_waiting"},
		"recover": {recover, "outbox_deliveries_endpoint_failed"},
	} {
		if !strings.Contains(c.plan, "INDEX "+c.index+" ") {
			t.Errorf("%s plan does not use %s:\n%s", name, c.index, c.plan)
		}
		if strings.Contains(c.plan, "TEMP B-TREE") {
			t.Errorf("%s plan sorts:\n%s", name, c.plan)
		}
	}
	for name, p := range map[string]string{"claim": claim, "busy": busy, "lease": lease, "next due": next, "reap": reap,
		"purge": purge, "waiting": waiting, "recover": recover} {
		for _, line := range strings.Split(p, "\n") {
			table := strings.HasPrefix(line, "SCAN outbox_deliveries") || line == "SCAN d" || strings.HasPrefix(line, "SCAN d ")
			if table && !strings.Contains(line, "INDEX") {
				t.Errorf("%s scans the deliveries table:\n%s", name, p)
			}
		}
	}
	if !strings.Contains(next, "outbox_deliveries_due") {
		t.Errorf("next due plan:\n%s", next)
	}
}
