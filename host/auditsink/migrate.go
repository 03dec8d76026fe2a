package auditsink

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationLock is the pg_advisory_xact_lock key every migration transaction takes, so two
// sinks starting together apply each migration once.
const migrationLock = 0x70616c6973616465 // "palisade"

// Migration is one embedded schema step: migrations/NNNN_name.sql.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations in version order.
func Migrations() ([]Migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".sql")
		num, name, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("auditsink: migration %s: want NNNN_name.sql", n)
		}
		b, err := migrationFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("auditsink: two migrations numbered %d", ms[i].Version)
		}
	}
	return ms, nil
}

// SchemaVersion is the version of the newest embedded migration: the schema this build writes.
func SchemaVersion() int {
	ms, err := Migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// Migrate applies, in version order, every embedded migration the database has not recorded in
// schema_migrations, each in its own transaction together with its record, under an advisory
// lock. It returns the versions it applied (none on a database already up to date). A
// database whose schema_migrations names a version newer than this build knows is refused.
func Migrate(ctx context.Context, db *pgxpool.Pool) ([]int, error) {
	ms, err := Migrations()
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer     PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return nil, fmt.Errorf("auditsink: migrate: schema_migrations: %w", err)
	}
	var newest int
	if err := db.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
		return nil, fmt.Errorf("auditsink: migrate: %w", err)
	}
	if len(ms) > 0 && newest > ms[len(ms)-1].Version {
		return nil, fmt.Errorf("auditsink: migrate: the database is at schema version %d, newer than this build's %d", newest, ms[len(ms)-1].Version)
	}
	var applied []int
	for _, m := range ms {
		done, err := apply(ctx, db, m)
		if err != nil {
			return applied, fmt.Errorf("auditsink: migration %04d_%s: %w", m.Version, m.Name, err)
		}
		if done {
			applied = append(applied, m.Version)
		}
	}
	return applied, nil
}

// apply runs m in one transaction unless it is recorded already; it reports whether it ran.
func apply(ctx context.Context, db *pgxpool.Pool, m Migration) (bool, error) {
	ran := false
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE version = $1`, m.Version).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			return err
		}
		ran = true
		return nil
	})
	return ran, err
}
