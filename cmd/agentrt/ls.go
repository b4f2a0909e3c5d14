package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/agentrt/agentrt/internal/termtext"
	"github.com/agentrt/agentrt/timeline"
)

// lsRow is one session in the output of ls.
type lsRow struct {
	ID      string    `json:"id"`
	Updated time.Time `json:"updated"`
	Runs    int       `json:"runs"`
	Turns   int       `json:"turns"`
	// Work and Waited are the runs' own time and the time the session
	// waited for a person, in milliseconds (timeline.Session.Work).
	Work   float64  `json:"work_ms"`
	Waited float64  `json:"waited_ms"`
	Input  int      `json:"input_tokens"`
	Output int      `json:"output_tokens"`
	Cost   *float64 `json:"cost_usd,omitempty"`
	// CacheRead is the share of the input tokens read from the
	// provider's cache (timeline.Session.CacheReadShare); nil when no
	// input was counted.
	CacheRead *float64 `json:"cache_read_share,omitempty"`
	// CacheBreaks counts the turns whose request broke the cached prefix.
	CacheBreaks int `json:"cache_breaks"`
	// RecordedCost is the sum of the costs the records give (the Agent's
	// Prices, in their currency); nil when they give none.
	RecordedCost *float64 `json:"cost,omitempty"`
	Stop         string   `json:"stop"`   // the last run's timeline.Run.Status
	Reason       string   `json:"reason"` // and its stop reason
	Layer        string   `json:"failing_layer"`
	Title        string   `json:"title"`
	Error        string   `json:"error,omitempty"`
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
		work, waited := s.Work()
		row.Work, row.Waited = ms(work), ms(waited)
		row.Input, row.Output = s.Usage.InputTokens, s.Usage.OutputTokens
		if priced {
			c := float64(row.Input)/1e6**priceIn + float64(row.Output)/1e6**priceOut
			row.Cost = &c
		}
		if share, ok := s.CacheReadShare(); ok {
			row.CacheRead = &share
		}
		row.CacheBreaks = s.CacheBreaks()
		if c, ok := s.Cost(); ok {
			row.RecordedCost = &c
		}
		row.Stop, row.Layer = "-", "-"
		if r := s.LastRun(); r != nil {
			row.Stop, row.Reason = r.Status(), r.Reason
			if s.Running && !r.Ended {
				row.Stop = "running"
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
	// Without prices on the command line, the costs the records give.
	recorded := false
	for _, r := range rows {
		recorded = recorded || r.RecordedCost != nil
	}
	recorded = recorded && !priced
	head := []string{"ID", "UPDATED", "RUNS", "TURNS", "WORK", "WAITED", "TOKENS IN/OUT", "CACHE READ"}
	if priced || recorded {
		head = append(head, "COST")
	}
	table := [][]string{append(head, "STOP", "FAILING LAYER", "TITLE")}
	for _, r := range rows {
		upd := "-"
		if !r.Updated.IsZero() {
			upd = r.Updated.UTC().Format("2006-01-02 15:04:05")
		}
		waited := "-"
		if r.Waited > 0 {
			waited = dur(time.Duration(r.Waited * float64(time.Millisecond)))
		}
		share := "-"
		if r.CacheRead != nil {
			share = percent(*r.CacheRead)
		}
		line := []string{r.ID, upd, strconv.Itoa(r.Runs), strconv.Itoa(r.Turns), dur(time.Duration(r.Work * float64(time.Millisecond))), waited, fmt.Sprintf("%d/%d", r.Input, r.Output), share}
		switch {
		case priced:
			c := "-"
			if r.Cost != nil {
				c = "$" + strconv.FormatFloat(*r.Cost, 'f', 4, 64)
			}
			line = append(line, c)
		case recorded:
			c := "-"
			if r.RecordedCost != nil {
				c = costText(*r.RecordedCost)
			}
			line = append(line, c)
		}
		title := r.Title
		if r.Error != "" {
			title = r.Error
		}
		table = append(table, append(line, r.Stop, r.Layer, termtext.Cut(termtext.Safe(title), 50)))
	}
	return writeTable(stdout, table)
}

// writeTable writes rows as columns two spaces apart, each as wide as its
// widest cell in terminal columns (a Chinese character takes two), the
// last column unpadded. The cells come from sessions, so each is made
// safe to print first.
func writeTable(w io.Writer, rows [][]string) error {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			row[i] = termtext.Safe(cell)
			if i == len(row)-1 {
				continue
			}
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], termtext.Width(row[i]))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		b.Reset()
		for i, cell := range row {
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-termtext.Width(cell)+2))
			}
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
