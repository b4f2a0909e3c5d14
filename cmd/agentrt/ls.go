package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/agentrt/agentrt/timeline"
)

// lsRow is one session in the output of ls.
type lsRow struct {
	ID      string    `json:"id"`
	Updated time.Time `json:"updated"`
	Runs    int       `json:"runs"`
	Turns   int       `json:"turns"`
	Input   int       `json:"input_tokens"`
	Output  int       `json:"output_tokens"`
	Cost    *float64  `json:"cost_usd,omitempty"`
	Stop    string    `json:"stop"`
	Layer   string    `json:"failing_layer"`
	Title   string    `json:"title"`
	Error   string    `json:"error,omitempty"`
}

func cmdLs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("ls", stderr)
	asJSON := fs.Bool("json", false, "print the list as JSON")
	priceIn := fs.Float64("price-in", 0, "US dollars per million input tokens (shows a cost column)")
	priceOut := fs.Float64("price-out", 0, "US dollars per million output tokens")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	list, err := timeline.List(ctx, rest[0])
	if err != nil {
		return err
	}
	priced := *priceIn > 0 || *priceOut > 0
	rows := make([]lsRow, 0, len(list))
	for _, l := range list {
		row := lsRow{ID: l.ID}
		if l.Err != nil {
			row.Error = l.Err.Error()
			row.Stop, row.Layer = "unreadable", "store"
			rows = append(rows, row)
			continue
		}
		s := l.Session
		row.Updated, row.Runs, row.Turns = s.Updated, len(s.Runs), s.Turns()
		row.Input, row.Output = s.Usage.InputTokens, s.Usage.OutputTokens
		if priced {
			c := float64(row.Input)/1e6**priceIn + float64(row.Output)/1e6**priceOut
			row.Cost = &c
		}
		row.Stop, row.Layer = "-", "-"
		if r := s.LastRun(); r != nil {
			row.Stop = r.Reason
			switch {
			case s.Running && !r.Ended:
				row.Stop = "running"
			case row.Stop == "":
				row.Stop = "no end record"
			}
			if l := s.FailingLayer(); l != "" {
				row.Layer = l
			}
			row.Title = oneLine(r.Input)
			if len(s.Runs) > 0 {
				row.Title = oneLine(s.Runs[0].Input)
			}
		}
		rows = append(rows, row)
	}
	if *asJSON {
		return writeJSON(stdout, rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	head := "ID\tUPDATED\tRUNS\tTURNS\tTOKENS IN/OUT\t"
	if priced {
		head += "COST\t"
	}
	fmt.Fprintln(tw, head+"STOP\tFAILING LAYER\tTITLE")
	for _, r := range rows {
		upd := "-"
		if !r.Updated.IsZero() {
			upd = r.Updated.UTC().Format("2006-01-02 15:04:05")
		}
		line := fmt.Sprintf("%s\t%s\t%d\t%d\t%d/%d\t", r.ID, upd, r.Runs, r.Turns, r.Input, r.Output)
		if priced {
			c := "-"
			if r.Cost != nil {
				c = "$" + strconv.FormatFloat(*r.Cost, 'f', 4, 64)
			}
			line += c + "\t"
		}
		title := r.Title
		if r.Error != "" {
			title = r.Error
		}
		fmt.Fprintln(tw, line+r.Stop+"\t"+r.Layer+"\t"+cutRunes(title, 50))
	}
	return tw.Flush()
}
