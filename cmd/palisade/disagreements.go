package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/audit"
)

// auditDisagreementsCmd is `palisade audit disagreements`: the shadow bundle's recent
// disagreements with the active one, from a gateway's admin API (GET /shadow/disagreements).
type auditDisagreementsCmd struct {
	adminFlags `embed:""`
	Limit      int  `default:"50" help:"At most this many, newest first (0 = all the gateway keeps)."`
	JSON       bool `name:"json" help:"Print JSON."`
}

func (c *auditDisagreementsCmd) Run(ctx context.Context, env *cliEnv) error {
	fail := func(err error) error {
		fmt.Fprintf(env.Stderr, "palisade audit disagreements: %v\n", err)
		return exitCode(exitFail)
	}
	ac, err := c.client()
	if err != nil {
		return fail(err)
	}
	var res admin.ShadowDisagreements
	if err := ac.do(ctx, http.MethodGet, "/shadow/disagreements?limit="+strconv.Itoa(c.Limit), nil, "", &res); err != nil {
		return fail(err)
	}
	if c.JSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
		return nil
	}
	st := res.Stats
	if !st.Loaded {
		fmt.Fprintf(env.Stdout, "no shadow bundle loaded; since start: judged %d, disagreed %d, dropped %d\n", st.Judged, st.Disagreements, st.Dropped)
	} else {
		fmt.Fprintf(env.Stdout, "shadow %s %s: judged %d, disagreed %d, dropped %d\n", st.Bundle.Name, st.Bundle.Version, st.Judged, st.Disagreements, st.Dropped)
	}
	if len(res.Disagreements) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tAUDIT ID\tSERVER\tTOOL\tACTIVE\tSHADOW\tRULE\tSTAGE")
	for _, d := range res.Disagreements {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Time.Format(time.RFC3339), d.AuditID, d.Server, d.Tool,
			d.Active.Name+":"+d.ActiveAction, d.Shadow.Name+":"+d.ShadowAction, d.Rule, d.Stage)
	}
	return tw.Flush()
}

// auditLabelCmd is `palisade audit label`: a person's verdict on a decision, through a
// gateway's admin API (POST /history/:id/label); the gateway records it as a signed audit event
// with the caller's verified identity.
type auditLabelCmd struct {
	adminFlags `embed:""`
	ID         string `arg:"" help:"The decision's audit id." placeholder:"ID"`
	Verdict    string `required:"" enum:"correct,false_positive,false_negative" help:"correct, false_positive (flagged, should have passed) or false_negative (passed, should have been stopped)."`
	Note       string `help:"Why (kept with the label)."`
}

func (c *auditLabelCmd) Run(ctx context.Context, env *cliEnv) error {
	ac, err := c.client()
	if err != nil {
		fmt.Fprintf(env.Stderr, "palisade audit label: %v\n", err)
		return exitCode(exitFail)
	}
	var ev audit.Event
	if err := ac.doJSON(ctx, http.MethodPost, "/history/"+url.PathEscape(c.ID)+"/label", admin.LabelRequest{Verdict: c.Verdict, Note: c.Note}, &ev); err != nil {
		fmt.Fprintf(env.Stderr, "palisade audit label: %s: %v\n", c.ID, err)
		return exitCode(exitFail)
	}
	fmt.Fprintf(env.Stdout, "labelled %s (%s: %s by %s) as %s by %s; label event %s\n", c.ID, ev.Tool, ev.Action, cmp.Or(ev.Rule, ev.Stage), ev.Label.Verdict, ev.Label.By, ev.ID)
	return nil
}
