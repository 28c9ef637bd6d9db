/**
 * The tables HA_STORE=postgres keeps, in one schema (HA_POSTGRES_SCHEMA, default `ha`). The
 * service creates them when HA_STORE_CREATE allows; otherwise a DBA runs `postgresSchemaDdl`
 * once (docs/stores.md prints it for the default schema, and a test checks that the two agree).
 *
 * Priorities (docs/protocol.md#priorities-and-preemption) are NULL where 0 or never stated; the
 * ALTERs add their columns to tables an earlier version created.
 *
 * Every time and epoch is a BIGINT: ha_time is UTC milliseconds (~1.7e12), beyond an INTEGER.
 * A row's ETag is a number drawn from one sequence on every write, never reused (a row deleted
 * and created again cannot answer to an ETag of its earlier life); the store hands it out as
 * its decimal string.
 */
export function postgresSchemaDdl(schema: string): string {
  const s = quoteIdentifier(schema);
  return `CREATE SCHEMA IF NOT EXISTS ${s};
CREATE SEQUENCE IF NOT EXISTS ${s}.etags;
CREATE TABLE IF NOT EXISTS ${s}.leases (
  utype       text    PRIMARY KEY,
  uuid        text    NOT NULL,
  address     text,
  epoch       bigint  NOT NULL,
  renewed_at  bigint  NOT NULL,
  started_at  bigint,
  revoked     boolean NOT NULL,
  ended_uuids jsonb   NOT NULL,
  handover    jsonb,
  priority    bigint,
  ranked      boolean,
  etag        bigint  NOT NULL
);
CREATE TABLE IF NOT EXISTS ${s}.terms (
  utype         text     NOT NULL,
  slot          smallint NOT NULL,
  epoch         bigint   NOT NULL,
  uuid          text     NOT NULL,
  address       text,
  started_at    bigint   NOT NULL,
  ended_at      bigint   NOT NULL,
  ended_by      text     NOT NULL,
  transactional boolean,
  PRIMARY KEY (utype, slot)
);
CREATE TABLE IF NOT EXISTS ${s}.standbys (
  utype    text   NOT NULL,
  uuid     text   NOT NULL,
  address  text,
  seen_at  bigint NOT NULL,
  priority bigint,
  PRIMARY KEY (utype, uuid)
);
ALTER TABLE ${s}.leases ADD COLUMN IF NOT EXISTS priority bigint;
ALTER TABLE ${s}.leases ADD COLUMN IF NOT EXISTS ranked boolean;
ALTER TABLE ${s}.standbys ADD COLUMN IF NOT EXISTS priority bigint;
CREATE TABLE IF NOT EXISTS ${s}.members (
  group_name     text   NOT NULL,
  member         text   NOT NULL,
  session        text   NOT NULL,
  address        text,
  joined_at      bigint NOT NULL,
  renewed_at     bigint NOT NULL,
  heartbeats     bigint NOT NULL,
  left_at        bigint,
  previous       jsonb,
  ended_sessions jsonb  NOT NULL,
  etag           bigint NOT NULL,
  PRIMARY KEY (group_name, member)
);
CREATE TABLE IF NOT EXISTS ${s}.sweep_markers (
  group_name       text   PRIMARY KEY,
  swept_at         bigint NOT NULL,
  gap_start        bigint,
  gap_end          bigint,
  removed_sessions jsonb  NOT NULL,
  etag             bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS ${s}.secrets (
  name   text PRIMARY KEY,
  secret text NOT NULL
);
`;
}

/** The one statement the service's identity needs beyond the tables: the grants, for a DBA who creates them (docs/stores.md). */
export function postgresGrantsDdl(schema: string, role: string): string {
  const s = quoteIdentifier(schema);
  const r = quoteIdentifier(role);
  return `GRANT USAGE ON SCHEMA ${s} TO ${r};
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${r};
GRANT USAGE ON SEQUENCE ${s}.etags TO ${r};
`;
}

/** A double-quoted identifier: names come from validated settings, and are quoted anyway. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
