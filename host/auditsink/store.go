package auditsink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is the audit record in PostgreSQL: what the sink writes and `audit query` reads.
type Store struct {
	db *pgxpool.Pool
}

// Open parses dsn (a libpq connection string or URL; PG* environment variables fill what it
// leaves out) and returns a Store. It connects lazily: a server that is down is an error of the
// first statement, not of Open.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("auditsink: dsn: %w", redact(err))
	}
	cfg.MaxConns = max(cfg.MaxConns, 4)
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("auditsink: open: %w", err)
	}
	return &Store{db: db}, nil
}

// NewStore wraps an open pool (the caller keeps closing it).
func NewStore(db *pgxpool.Pool) *Store { return &Store{db: db} }

// CheckDSN reports whether dsn parses, without connecting; the error never repeats the DSN
// (it may hold a password).
func CheckDSN(dsn string) error {
	if strings.TrimSpace(dsn) == "" {
		return errors.New("required: a libpq connection string (host=... dbname=...) or a postgres:// URL")
	}
	if _, err := pgxpool.ParseConfig(dsn); err != nil {
		return redact(err)
	}
	return nil
}

// redact drops pgconn's copy of the connection string from a parse error: its own redaction
// of passwords is best effort.
func redact(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		var ue *url.Error
		if u := pe.Unwrap(); u != nil && !errors.As(u, &ue) { // a url.Error repeats the URL
			return fmt.Errorf("cannot parse the connection string (not repeated here: it may hold a password): %w", u)
		}
		return errors.New("cannot parse the connection string (not repeated here: it may hold a password)")
	}
	return err
}

// Pool is the store's connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.db }

// Migrate applies the embedded migrations (see Migrate).
func (s *Store) Migrate(ctx context.Context) ([]int, error) { return Migrate(ctx, s.db) }

// Close closes the pool.
func (s *Store) Close() { s.db.Close() }

// inserted counts what one Insert wrote.
type inserted struct {
	stored, duplicates, rejected int
}

// tempDDL is the per-connection staging table the batch is copied into.
const tempDDL = `CREATE TEMP TABLE IF NOT EXISTS audit_in (LIKE audit_events INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`

// insert writes recs in one transaction: events are COPYed into a temporary table, then moved
// into audit_events with ON CONFLICT DO NOTHING (a trusted event once per audit id, an
// untrusted one once per stream message); non-events go to audit_rejects. Nothing is written
// unless all of it is.
func (s *Store) insert(ctx context.Context, recs []*record) (inserted, error) {
	var n inserted
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		n = inserted{}
		var rows [][]any
		var rejects []*record
		for _, r := range recs {
			if r.reject != "" {
				rejects = append(rejects, r)
				continue
			}
			rows = append(rows, values(r))
		}
		if len(rows) > 0 {
			if _, err := tx.Exec(ctx, tempDDL); err != nil {
				return err
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"audit_in"}, columns, pgx.CopyFromRows(rows)); err != nil {
				return err
			}
			cols := strings.Join(columns, ", ")
			tag, err := tx.Exec(ctx, `INSERT INTO audit_events (`+cols+`) SELECT `+cols+` FROM audit_in WHERE verified
ON CONFLICT (audit_id) WHERE verified DO NOTHING`)
			if err != nil {
				return err
			}
			n.stored += int(tag.RowsAffected())
			tag, err = tx.Exec(ctx, `INSERT INTO audit_events (`+cols+`) SELECT `+cols+` FROM audit_in WHERE NOT verified
ON CONFLICT (audit_id, stream_seq) WHERE NOT verified DO NOTHING`)
			if err != nil {
				return err
			}
			n.stored += int(tag.RowsAffected())
			n.duplicates = len(rows) - n.stored
		}
		for _, r := range rejects {
			h, _ := json.Marshal(r.headers)
			tag, err := tx.Exec(ctx, `INSERT INTO audit_rejects (stream_seq, data_sha256, subject, problem, headers, data)
VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, int64(r.seq), r.dataSHA256(), r.subject, r.reject, string(h), r.raw)
			if err != nil {
				return err
			}
			n.rejected += int(tag.RowsAffected())
		}
		return nil
	})
	return n, err
}

// dataError reports whether err is PostgreSQL refusing a value (SQLSTATE class 22: a \u0000
// in a JSON string, a time out of range), which retrying the same rows cannot cure.
func dataError(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && strings.HasPrefix(pe.Code, "22")
}

// Prune deletes events (and rejects) recorded before t; it returns how many rows went.
func (s *Store) Prune(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM audit_events WHERE time < $1`, before)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		tag, err = tx.Exec(ctx, `DELETE FROM audit_rejects WHERE received_at < $1`, before)
		n += tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("auditsink: prune: %w", err)
	}
	return n, nil
}
