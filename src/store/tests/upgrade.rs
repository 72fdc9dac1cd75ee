//! Databases made by the binaries before the migrations became SQL files
//! (`schema7.rs`, their statements verbatim) upgrade to the same schema a
//! new database gets, from every version, on both engines; and a SQLite
//! file written by such a binary (tests/fixtures/store/README.md says how
//! it was made) opens and reads back.

use super::*;
use crate::store::migrations::{POSTGRES, SQLITE, STEMS};

/// The schema of a SQLite database as text: every table, index and their
/// SQL (whitespace collapsed: the files are indented otherwise than the
/// constants were, and SQLite keeps a CREATE's text as written), the
/// version and the generation row.
fn sqlite_schema(conn: &rusqlite::Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        .unwrap();
    let mut schema: Vec<String> = stmt
        .query_map([], |r| {
            let sql: Option<String> = r.get(3)?;
            let sql = sql.unwrap_or_default();
            let sql = sql.split_whitespace().collect::<Vec<_>>().join(" ");
            Ok(format!(
                "{} {} {} {sql}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    schema.push(format!("user_version {version}"));
    if let Ok(g) = conn.query_row("SELECT value FROM generation", [], |r| r.get::<_, i64>(0)) {
        schema.push(format!("generation {g}"));
    }
    schema
}

#[test]
fn the_files_are_numbered_pairs() {
    for (n, stem) in STEMS.iter().enumerate() {
        assert!(
            stem.starts_with(&format!("{:04}_", n + 1)),
            "{stem} is version {}",
            n + 1
        );
    }
    assert_eq!((SQLITE.len(), POSTGRES.len()), (STEMS.len(), STEMS.len()));
    // Every file of the folder is listed: none added but forgotten.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/store/migrations");
    let mut listed: Vec<String> = STEMS
        .iter()
        .flat_map(|s| [format!("{s}.postgres.sql"), format!("{s}.sqlite.sql")])
        .collect();
    listed.sort();
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".sql"))
        .collect();
    found.sort();
    assert_eq!(found, listed);
}

/// A SQLite database migrated by `migrations` from empty.
fn sqlite_made_by(migrations: &[&str]) -> rusqlite::Connection {
    let mut conn = rusqlite::Connection::open_in_memory().unwrap();
    migrations::migrate(&mut conn, migrations).unwrap();
    conn
}

#[test]
fn sqlite_databases_of_every_old_version_upgrade_to_the_new_schema() {
    let old = schema7::SQLITE;
    assert_eq!(
        sqlite_schema(&sqlite_made_by(&SQLITE[..old.len()])),
        sqlite_schema(&sqlite_made_by(old)),
        "the files make what the constants made"
    );
    let want = sqlite_schema(&sqlite_made_by(SQLITE));
    for n in 0..=old.len() {
        let mut conn = sqlite_made_by(&old[..n]);
        migrations::migrate(&mut conn, SQLITE).unwrap();
        assert_eq!(sqlite_schema(&conn), want, "upgraded from version {n}");
    }
    // And from every version the files made since.
    for n in old.len() + 1..SQLITE.len() {
        let mut conn = sqlite_made_by(&SQLITE[..n]);
        migrations::migrate(&mut conn, SQLITE).unwrap();
        assert_eq!(sqlite_schema(&conn), want, "upgraded from version {n}");
    }
}

/// A node scope as a schema-9 hierad wrote it (migration 10 gave scope
/// versions their generation), with its change-log row; the same text on
/// both engines.
const SCOPE_AT_9: &str = r#"
    INSERT INTO components (id, name) VALUES (1, 'fuel');
    INSERT INTO resource_definitions (id, component_id, name) VALUES (1, 1, 'astute');
    INSERT INTO environments (id) VALUES (1);
    INSERT INTO environment_components (environment_id, component_id, position) VALUES (1, 1, 0);
    INSERT INTO hierarchy_levels (environment_id, position, name) VALUES (1, 0, 'nodes');
    INSERT INTO registers (environment_id, level) VALUES (1, 'nodes');
    INSERT INTO register_values (environment_id, level, value) VALUES (1, 'nodes', 'node-1');
    INSERT INTO node_scopes (environment_id, node, version, created_at, author, deleted, content)
        VALUES (1, 'node-1', 1, 1700000000, 'alice', 0, '{"role":"db"}');
    UPDATE generation SET value = 1 WHERE id = 1;
    INSERT INTO changes (generation, environment_id, level, level_value, resource, kind)
        VALUES (1, 1, 'nodes', 'node-1', NULL, 'scope');
"#;

/// [`SCOPE_AT_9`]'s database after the upgrade: the old scope reads back,
/// its feed row names no version (its generation was not recorded), and
/// the next write's row names its version, author and time.
fn scope_written_at_9_reads_back(s: &dyn Store) {
    let (_, scope) = s.scope(1, "node-1", None).unwrap();
    assert_eq!(
        serde_json::Value::Object(scope),
        serde_json::json!({"role": "db"})
    );
    let (newest, logged) = s.logged_since(0, 10).unwrap();
    assert_eq!(newest, 1);
    let old: Vec<_> = logged
        .iter()
        .map(|l| (l.kind.as_str(), l.version))
        .collect();
    assert_eq!(old, vec![("scope", None)]);
    let mut facts = serde_json::Map::new();
    facts.insert("role".into(), "web".into());
    let v2 = s.put_scope(1, "node-1", &facts, Some("bob")).unwrap();
    let (_, logged) = s.logged_since(1, 10).unwrap();
    let new: Vec<_> = logged
        .iter()
        .map(|l| (l.generation, l.version, l.author.as_deref(), l.created_at))
        .collect();
    assert_eq!(new, vec![(2, Some(2), Some("bob"), Some(v2.created_at))]);
}

#[test]
fn a_sqlite_database_of_schema_9_with_scopes_upgrades() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db.sqlite");
    let mut conn = rusqlite::Connection::open(&file).unwrap();
    migrations::migrate(&mut conn, &SQLITE[..9]).unwrap();
    conn.execute_batch(SCOPE_AT_9).unwrap();
    drop(conn);
    scope_written_at_9_reads_back(&SqliteStore::open(&file).unwrap());
}

#[test]
fn a_postgres_database_of_schema_9_with_scopes_upgrades() {
    let (url, mut client) = pg_made_by(&POSTGRES[..9]);
    client.batch_execute(SCOPE_AT_9).unwrap();
    drop(client);
    scope_written_at_9_reads_back(&PgStore::open(&url).unwrap());
}

/// `tests/fixtures/store/schema7.sqlite`, written by `hierad` at schema
/// version 7 (packed old versions, a deletion marker, a register,
/// authors), opens with its contents as they were, its schema that of a
/// new database, and takes writes.
#[test]
fn a_database_written_by_the_version_7_binary_opens_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db.sqlite");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/store/schema7.sqlite"
    );
    std::fs::copy(fixture, &file).unwrap();
    let s = SqliteStore::open(&file).unwrap();
    let node = "nodes=node-1.domain.tld";
    let astute = at(1, node, "astute", DocKind::Values);
    let nova = |debug: bool| rhash! {"debug" => debug};
    let v1 = rhash! {"deployment_id" => 1, "nova" => nova(false)};
    let v2 = rhash! {"deployment_id" => 2, "nova" => nova(false)};
    assert_eq!(s.get(&astute, Some(1)).unwrap().unwrap().1, v1, "packed");
    assert_eq!(s.get(&astute, None).unwrap().unwrap().1, v2);
    let history = s.history(&astute).unwrap();
    assert_eq!(history.len(), 2);
    assert!(
        history
            .iter()
            .all(|v| v.author.as_deref() == Some("local:root"))
    );
    let overrides = at(1, node, "astute", DocKind::Overrides);
    let want = rhash! {"nova" => nova(true)};
    assert_eq!(s.get(&overrides, None).unwrap().unwrap().1, want);
    let globals = at(1, node, "globals", DocKind::Values);
    let (latest, _) = s.get(&globals, None).unwrap().unwrap();
    assert!(latest.deleted);
    let want = rhash! {"fqdn" => "node-1.domain.tld"};
    assert_eq!(s.get(&globals, Some(1)).unwrap().unwrap().1, want);
    let register = s.register(1, "nodes").unwrap();
    assert_eq!(register, Some(vec!["node-1.domain.tld".to_owned()]));
    s.raw(|conn| {
        let mut have = sqlite_schema(conn);
        let mut fresh = sqlite_schema(&sqlite_made_by(SQLITE));
        // The generation row counts this file's writes.
        have.retain(|l| !l.starts_with("generation"));
        fresh.retain(|l| !l.starts_with("generation"));
        assert_eq!(have, fresh);
    });
    // Its versions carry no generation: reads are exact from the
    // generation it had when it was upgraded on, and refused before.
    let upgraded = s.generation().unwrap();
    assert!(upgraded > 0);
    assert_eq!(s.oldest_readable(None).unwrap(), upgraded);
    let now = s.load_all().unwrap().documents;
    assert_eq!(s.load_at(upgraded, None).unwrap().documents, now);
    match s.load_at(upgraded - 1, None) {
        Err(StoreError::Gone(g)) => assert_eq!(g.oldest, upgraded),
        other => panic!("expected Gone, got {other:?}"),
    }
    let v3 = s.put(&astute, &rhash! {"deployment_id" => 3}).unwrap();
    assert_eq!(v3.number, 3);
    drop(s);
    // Written and read again through a second opening.
    let s = SqliteStore::open(&file).unwrap();
    assert_eq!(s.get(&astute, Some(1)).unwrap().unwrap().1, v1);
    assert_eq!(s.history(&astute).unwrap().len(), 3);
}

/// The schema of the PostgreSQL database `client` is connected to, as
/// text: columns in order with their types, defaults and collations,
/// constraints, indexes, the version and the generation row.
fn pg_schema(client: &mut ::postgres::Client) -> Vec<String> {
    let queries = [
        "SELECT table_name || ' ' || ordinal_position || ' ' || column_name || ' '
             || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
             || ' ' || coalesce(collation_name, '')
         FROM information_schema.columns WHERE table_schema = current_schema()",
        "SELECT conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
         FROM pg_constraint WHERE connamespace = current_schema()::regnamespace",
        "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema()",
        "SELECT 'version ' || version FROM schema_version",
        "SELECT 'generation ' || value FROM generation",
    ];
    let mut schema = Vec::new();
    for q in queries {
        let mut rows: Vec<String> = client
            .query(q, &[])
            .unwrap_or_else(|e| panic!("{q}: {e}"))
            .iter()
            .map(|r| r.get(0))
            .collect();
        rows.sort();
        schema.extend(rows);
    }
    schema
}

/// A fresh PostgreSQL database migrated by `migrations` from empty;
/// its URL and a connection.
fn pg_made_by(migrations: &[&str]) -> (String, ::postgres::Client) {
    let url = pg::fresh_database();
    let mut client = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
    crate::store::postgres::migrations::migrate(&mut client, migrations).unwrap();
    (url, client)
}

#[test]
fn postgres_databases_of_every_old_version_upgrade_to_the_new_schema() {
    let old = schema7::POSTGRES;
    assert_eq!(
        pg_schema(&mut pg_made_by(&POSTGRES[..old.len()]).1),
        pg_schema(&mut pg_made_by(old).1),
        "the files make what the constants made"
    );
    let want = pg_schema(&mut pg_made_by(POSTGRES).1);
    for n in 0..=old.len() {
        let (_url, mut client) = pg_made_by(&old[..n]);
        crate::store::postgres::migrations::migrate(&mut client, POSTGRES).unwrap();
        assert_eq!(pg_schema(&mut client), want, "upgraded from version {n}");
    }
    // And from every version the files made since.
    for n in old.len() + 1..POSTGRES.len() {
        let (_url, mut client) = pg_made_by(&POSTGRES[..n]);
        crate::store::postgres::migrations::migrate(&mut client, POSTGRES).unwrap();
        assert_eq!(pg_schema(&mut client), want, "upgraded from version {n}");
    }
}

/// Rows as the first schema's hierad wrote them on PostgreSQL read back
/// after `PgStore::open` upgrades the database, and the environment's
/// total is counted (migration 7).
#[test]
fn a_postgres_database_of_the_first_schema_opens_and_reads_back() {
    let (url, mut client) = pg_made_by(&schema7::POSTGRES[..1]);
    let doc = rhash! {"v" => 1};
    client
        .batch_execute(
            "INSERT INTO components VALUES (1, 'fuel');
             INSERT INTO resource_definitions VALUES (1, 1, 'astute');
             INSERT INTO environments VALUES (1);
             INSERT INTO environment_components VALUES (1, 1, 0);
             INSERT INTO hierarchy_levels VALUES (1, 0, 'nodes');",
        )
        .unwrap();
    let content = crate::wire::to_string(&Value::Hash(doc.clone()));
    client
        .execute(
            "INSERT INTO documents VALUES (1, 'nodes', 'n1', 'astute', 'values', 1, 1700000000, 0, $1, $2)",
            &[&(content.len() as i64), &content],
        )
        .unwrap();
    client
        .batch_execute("INSERT INTO heads VALUES (1, 'nodes', 'n1', 'astute', 'values', 1)")
        .unwrap();
    drop(client);
    let s = PgStore::open(&url).unwrap();
    let a = at(1, "nodes=n1", "astute", DocKind::Values);
    assert_eq!(s.get(&a, None).unwrap().unwrap().1, doc);
    assert!(s.history(&a).unwrap()[0].author.is_none());
    let total = s.query_sql("SELECT live_bytes FROM environments").unwrap()[0]
        .int(0)
        .unwrap();
    assert_eq!(total, content.len() as i64);
    assert_eq!(s.put(&a, &rhash! {"v" => 2}).unwrap().number, 2);
}
