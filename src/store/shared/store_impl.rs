//! The [`Store`] of every [`Engine`]: each method one transaction of the
//! shared code.

use super::documents;
use super::registers;
use super::retention::{prune_batch, read_retention};
use super::{
    define_resources, encode, load_all, load_component, load_environment, load_environments,
    load_environments_where, now, resolve_component, sql_version,
};
use crate::configdb::model::{check_component_name, check_level_name};
use crate::configdb::unparsed::Content;
use crate::configdb::{
    Component, ComponentRef, Conflict, DocAddress, Environment, Invalid, NewComponent,
    NewEnvironment, NotFound, Retention, SnapshotData, Tag, Version, check_depth,
};
use crate::hiera::Hash;
use crate::store::changes::{self, Changes};
use crate::store::sql::{Engine, Sql, params};
use crate::store::{
    DatabaseSize, DocWrite, ImportBatch, ImportReport, PruneReport, Quotas, Result, Store, WriteCtx,
};
use std::collections::{HashMap, HashSet};

/// Inserts a row with id `id`, or (None) the next after the largest, as
/// SQLite numbers rows; the write lock makes "the largest" stable.
const INSERT_COMPONENT: &str = "INSERT INTO components (id, name)
     VALUES (coalesce(CAST(?1 AS BIGINT), (SELECT coalesce(max(id), 0) + 1 FROM components)), ?2) RETURNING id";
const INSERT_ENVIRONMENT: &str = "INSERT INTO environments (id, hiera)
     VALUES (coalesce(CAST(?1 AS BIGINT), (SELECT coalesce(max(id), 0) + 1 FROM environments)), ?2) RETURNING id";

fn create_environment(tx: &dyn Sql, new: &NewEnvironment) -> Result<Environment> {
    let mut components: Vec<(i64, String)> = Vec::new();
    for which in &new.components {
        let (id, name) = resolve_component(tx, which)?;
        if components.iter().any(|(c, _)| *c == id) {
            return Err(Conflict::ComponentListedTwice(which.to_string()).into());
        }
        components.push((id, name));
    }
    if let Some(id) = new.id {
        let taken = tx.query_opt(
            "SELECT deleted_at FROM environments WHERE id = ?1",
            params![id],
        )?;
        match taken.map(|r| r.opt_int(0)).transpose()? {
            Some(None) => return Err(Conflict::EnvironmentId(id).into()),
            Some(Some(_)) => return Err(Conflict::EnvironmentDeleted(id).into()),
            None => {}
        }
    }
    let env = tx
        .query_one(INSERT_ENVIRONMENT, params![new.id, new.hiera.number()])?
        .int(0)?;
    let mut defined: HashMap<String, String> = HashMap::new();
    for (position, (component, name)) in components.iter().enumerate() {
        tx.execute(
            "INSERT INTO environment_components (environment_id, component_id, position)
             VALUES (?1, ?2, ?3)",
            params![env, *component, position as i64],
        )?;
        for def in load_component(tx, *component)?.resource_definitions {
            if let Some(first) = defined.get(&def.name) {
                return Err(Conflict::ResourceInEnvironment {
                    env,
                    resource: def.name,
                    first: first.clone(),
                    second: name.clone(),
                }
                .into());
            }
            defined.insert(def.name, name.clone());
        }
    }
    for (position, level) in new.hierarchy_levels.iter().enumerate() {
        tx.execute(
            "INSERT INTO hierarchy_levels (environment_id, position, name)
             VALUES (?1, ?2, ?3)",
            params![env, position as i64, level],
        )?;
    }
    load_environment(tx, env)
}

fn delete_component(tx: &dyn Sql, which: &ComponentRef) -> Result<()> {
    let (id, name) = resolve_component(tx, which)?;
    let users: Vec<(i64, bool)> = tx
        .query(
            "SELECT ec.environment_id, e.deleted_at IS NOT NULL
             FROM environment_components ec JOIN environments e ON e.id = ec.environment_id
             WHERE ec.component_id = ?1 ORDER BY ec.environment_id",
            params![id],
        )?
        .iter()
        .map(|r| Ok((r.int(0)?, r.flag(1)?)))
        .collect::<Result<_>>()?;
    if !users.is_empty() {
        return Err(Conflict::ComponentInUse {
            component: name,
            environments: users.iter().map(|(id, _)| *id).collect(),
            deleted: users
                .iter()
                .filter(|(_, d)| *d)
                .map(|(id, _)| *id)
                .collect(),
        }
        .into());
    }
    tx.execute("DELETE FROM components WHERE id = ?1", params![id])?;
    Ok(())
}

impl<E: Engine> Store for E {
    fn create_component(&self, new: &NewComponent) -> Result<Component> {
        check_component_name(&new.name)?;
        self.write(|tx, log| {
            log.structure();
            if let Some(id) = new.id {
                if tx
                    .query_opt("SELECT 1 FROM components WHERE id = ?1", params![id])?
                    .is_some()
                {
                    return Err(Conflict::ComponentId(id).into());
                }
            }
            if let Some(row) = tx.query_opt(
                "SELECT id FROM components WHERE name = ?1",
                params![&new.name],
            )? {
                return Err(Conflict::ComponentName {
                    name: new.name.clone(),
                    id: row.int(0)?,
                }
                .into());
            }
            let id = tx
                .query_one(INSERT_COMPONENT, params![new.id, &new.name])?
                .int(0)?;
            define_resources(tx, id, &new.resource_definitions)?;
            load_component(tx, id)
        })
    }

    fn component(&self, which: &ComponentRef) -> Result<Component> {
        self.read(|tx| {
            let (id, _) = resolve_component(tx, which)?;
            load_component(tx, id)
        })
    }

    #[cfg(test)]
    fn components(&self) -> Result<Vec<Component>> {
        self.read(|tx| super::load_components(tx, None))
    }

    fn delete_component(&self, which: &ComponentRef) -> Result<()> {
        self.write(|tx, log| {
            log.structure();
            delete_component(tx, which)
        })
    }

    #[cfg(test)]
    fn add_resource_definitions(
        &self,
        which: &ComponentRef,
        names: &[String],
    ) -> Result<Component> {
        self.write(|tx, log| {
            log.structure();
            let (id, _) = resolve_component(tx, which)?;
            define_resources(tx, id, names)?;
            load_component(tx, id)
        })
    }

    fn set_resource_content(
        &self,
        which: &ComponentRef,
        resource: &str,
        content: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Component> {
        self.write(|tx, log| {
            log.structure();
            let (id, name) = resolve_component(tx, which)?;
            crate::store::content::set_content(tx, (id, &name), resource, content)?;
            load_component(tx, id)
        })
    }

    fn create_environment(&self, new: &NewEnvironment) -> Result<Environment> {
        let mut seen = HashSet::new();
        for level in &new.hierarchy_levels {
            check_level_name(level)?;
            if !seen.insert(level) {
                return Err(Invalid::LevelListedTwice(level.clone()).into());
            }
        }
        self.write(|tx, log| {
            log.structure();
            create_environment(tx, new)
        })
    }

    fn environment(&self, id: i64) -> Result<Environment> {
        self.read(|tx| load_environment(tx, id))
    }

    fn environments(&self) -> Result<Vec<Environment>> {
        self.read(|tx| load_environments(tx, None))
    }

    fn delete_environment(&self, id: i64) -> Result<()> {
        self.write(|tx, log| {
            log.structure();
            match tx.execute(
                "UPDATE environments SET deleted_at = ?2 WHERE id = ?1 AND deleted_at IS NULL",
                params![id, now()],
            )? {
                0 => Err(NotFound::Environment(id).into()),
                _ => Ok(()),
            }
        })
    }

    fn restore_environment(&self, id: i64) -> Result<Environment> {
        self.write(|tx, log| {
            log.structure();
            let deleted = tx.query_opt(
                "SELECT deleted_at FROM environments WHERE id = ?1",
                params![id],
            )?;
            match deleted.map(|r| r.opt_int(0)).transpose()? {
                None => Err(NotFound::Environment(id).into()),
                Some(None) => Err(Conflict::EnvironmentNotDeleted(id).into()),
                Some(Some(_)) => {
                    tx.execute(
                        "UPDATE environments SET deleted_at = NULL WHERE id = ?1",
                        params![id],
                    )?;
                    load_environment(tx, id)
                }
            }
        })
    }

    fn purge_environment(&self, id: i64) -> Result<()> {
        self.write(|tx, log| {
            log.structure();
            // Heads first: their foreign key points at documents, and
            // SQLite cascades in no promised order.
            tx.execute("DELETE FROM heads WHERE environment_id = ?1", params![id])?;
            match tx.execute("DELETE FROM environments WHERE id = ?1", params![id])? {
                0 => Err(NotFound::Environment(id).into()),
                _ => Ok(()),
            }
        })
    }

    fn deleted_environments(&self) -> Result<Vec<(Environment, i64)>> {
        self.read(|tx| {
            let when: HashMap<i64, i64> = tx
                .query(
                    "SELECT id, deleted_at FROM environments WHERE deleted_at IS NOT NULL",
                    &[],
                )?
                .iter()
                .map(|r| Ok((r.int(0)?, r.int(1)?)))
                .collect::<Result<_>>()?;
            Ok(load_environments_where(tx, None, true)?
                .into_iter()
                .map(|e| {
                    let at = when.get(&e.id).copied().unwrap_or_default();
                    (e, at)
                })
                .collect())
        })
    }

    fn retention(&self, env: i64) -> Result<Retention> {
        self.read(|tx| {
            load_environment(tx, env)?;
            read_retention(tx, env)
        })
    }

    fn set_retention(&self, env: i64, retention: &Retention) -> Result<Retention> {
        self.write(|tx, _| {
            load_environment(tx, env)?;
            tx.execute(
                "UPDATE environments SET keep_versions = ?2, keep_days = ?3 WHERE id = ?1",
                params![
                    env,
                    retention.keep_versions.map(sql_version),
                    retention.keep_days.map(sql_version)
                ],
            )?;
            read_retention(tx, env)
        })
    }

    fn prune(&self, default: &Retention, now: i64, budget: usize) -> Result<PruneReport> {
        self.write(|tx, _| changes::prune_log(tx))?;
        let policies: Vec<(i64, Retention)> = self.read(|tx| {
            let ids: Vec<i64> = tx
                .query("SELECT id FROM environments ORDER BY id", &[])?
                .iter()
                .map(|r| r.int(0))
                .collect::<Result<_>>()?;
            ids.into_iter()
                .map(|id| Ok((id, read_retention(tx, id)?.over(*default))))
                .collect()
        })?;
        let mut report = PruneReport::default();
        for (env, retention) in policies {
            if !retention.prunes() {
                continue;
            }
            let left = budget.saturating_sub(report.pruned);
            if left == 0 {
                report.more = true;
                break;
            }
            let pruned = self.write(|tx, _| prune_batch(tx, env, &retention, now, left))?;
            report.pruned += pruned;
            if pruned == left {
                report.more = true;
                break;
            }
        }
        Ok(report)
    }

    fn database_size(&self) -> Result<DatabaseSize> {
        Engine::database_size(self)
    }

    fn check_writable(&self) -> Result<()> {
        Engine::check_writable(self)
    }

    fn set_quotas(&self, quotas: Quotas) {
        Engine::quotas(self).set(quotas);
    }

    fn write_document(
        &self,
        at: &DocAddress,
        write: DocWrite<'_>,
        ctx: WriteCtx<'_>,
    ) -> Result<Version> {
        let put_text = match &write {
            DocWrite::Put(doc) => {
                check_depth(at, doc)?;
                Some(encode(doc))
            }
            _ => None,
        };
        let quotas = Engine::quotas(self).get();
        self.write(|tx, log| documents::write_document(tx, log, at, (write, put_text), ctx, quotas))
    }

    fn get(&self, at: &DocAddress, version: Option<u64>) -> Result<Option<(Version, Hash)>> {
        self.read(|tx| documents::get(tx, at, version))
    }

    fn kept_file(&self, at: &DocAddress) -> Result<Option<crate::configdb::unparsed::Unparsed>> {
        self.read(|tx| documents::kept_file(tx, at))
    }

    fn history(&self, at: &DocAddress) -> Result<Vec<Version>> {
        self.read(|tx| documents::history(tx, at))
    }

    fn import(&self, batch: &ImportBatch) -> Result<ImportReport> {
        let judged;
        let batch = match judge_files(batch) {
            Some(b) => {
                judged = b;
                &judged
            }
            None => batch,
        };
        for doc in &batch.documents {
            let at = DocAddress::new(batch.env, doc.path.clone(), &doc.resource, doc.kind);
            if let Content::Data(content) = &doc.content {
                check_depth(&at, content)?;
            }
        }
        let texts: Vec<String> = batch
            .documents
            .iter()
            .map(|d| d.content.to_stored())
            .collect();
        let quotas = Engine::quotas(self).get();
        self.write(|tx, log| documents::import(tx, log, batch, &texts, quotas))
    }

    fn rewrite_latest(
        &self,
        env: Option<i64>,
        rewrite: crate::store::Rewrite<'_>,
        author: Option<&str>,
    ) -> Result<Vec<(DocAddress, Version)>> {
        let quotas = Engine::quotas(self).get();
        self.write(|tx, log| super::rewrite::rewrite_latest(tx, log, env, rewrite, author, quotas))
    }

    fn register(&self, env: i64, level: &str) -> Result<Option<Vec<String>>> {
        self.read(|tx| registers::list(tx, env, level))
    }

    fn set_register(&self, env: i64, level: &str, values: Option<&[String]>) -> Result<()> {
        self.write(|tx, log| registers::set(tx, log, env, level, values))
    }

    fn add_to_register(&self, env: i64, level: &str, values: &[String]) -> Result<usize> {
        self.write(|tx, log| registers::add(tx, log, env, level, values))
    }

    fn remove_from_register(&self, env: i64, level: &str, values: &[String]) -> Result<usize> {
        self.write(|tx, log| registers::remove(tx, log, env, level, values))
    }

    fn in_register(&self, env: i64, level: &str, value: &str) -> Result<Option<bool>> {
        self.read(|tx| registers::contains(tx, env, level, value))
    }

    fn registered_in(&self, level: &str, value: &str) -> Result<Vec<i64>> {
        self.read(|tx| registers::environments_with(tx, level, value))
    }

    fn load_all(&self) -> Result<SnapshotData> {
        self.read(|tx| load_all(tx))
    }

    fn load_at(&self, generation: u64, env: Option<i64>) -> Result<SnapshotData> {
        self.read(|tx| super::at::load_at(tx, generation, env))
    }

    fn oldest_readable(&self, env: Option<i64>) -> Result<u64> {
        self.read(|tx| super::at::oldest_readable(tx, env))
    }

    fn create_tag(&self, name: &str, generation: Option<u64>, author: Option<&str>) -> Result<Tag> {
        self.write(|tx, _| super::tags::create(tx, name, generation, author))
    }

    fn tag(&self, name: &str) -> Result<Tag> {
        self.read(|tx| super::tags::get(tx, name))
    }

    fn tags(&self) -> Result<Vec<Tag>> {
        self.read(|tx| super::tags::all(tx))
    }

    fn delete_tag(&self, name: &str) -> Result<Tag> {
        self.write(|tx, _| super::tags::delete(tx, name))
    }

    fn put_scope(
        &self,
        env: i64,
        node: &str,
        scope: &super::Scope,
        author: Option<&str>,
    ) -> Result<Version> {
        self.write(|tx, log| super::scopes::put(tx, log, (env, node), scope, author))
    }

    fn scope(&self, env: i64, node: &str, version: Option<u64>) -> Result<(Version, super::Scope)> {
        self.read(|tx| super::scopes::get(tx, (env, node), version))
    }

    fn scope_history(&self, env: i64, node: &str) -> Result<Vec<Version>> {
        self.read(|tx| super::scopes::history(tx, (env, node)))
    }

    fn delete_scope(&self, env: i64, node: &str, author: Option<&str>) -> Result<Version> {
        self.write(|tx, log| super::scopes::delete(tx, log, (env, node), author))
    }

    fn generation(&self) -> Result<u64> {
        self.read(|tx| changes::generation(tx))
    }

    fn logged_since(&self, since: u64, limit: usize) -> Result<(u64, Vec<changes::Logged>)> {
        self.read(|tx| changes::logged_since(tx, since, limit))
    }

    #[cfg(test)]
    fn execute_sql(&self, sql: &str, params: &[crate::store::sql::Param<'_>]) -> Result<usize> {
        self.write(|tx, _| tx.execute(sql, params))
    }

    #[cfg(test)]
    fn query_sql(&self, sql: &str) -> Result<Vec<crate::store::sql::Row>> {
        self.read(|tx| tx.query(sql, &[]))
    }

    fn dump(&self, out: &mut dyn FnMut(crate::store::dump::Dumped) -> Result<()>) -> Result<()> {
        self.read(|tx| super::dump::dump(tx, out))
    }

    fn check_versions(
        &self,
        out: &mut dyn FnMut(crate::store::UnreadableVersion) -> Result<()>,
    ) -> Result<crate::store::VersionsChecked> {
        self.read(|tx| super::dump::check_versions(tx, out))
    }

    fn replay(
        &self,
        items: &mut dyn Iterator<Item = Result<crate::store::dump::Dumped>>,
        replace: bool,
    ) -> Result<()> {
        self.write(|tx, log| super::dump::replay(tx, log, items, replace))
    }

    fn change_feed(&self) -> Option<crate::store::ChangeFeed> {
        Engine::change_feed(self)
    }

    fn changes_since(&self, since: u64) -> Result<Changes> {
        self.read(|tx| {
            changes::since(
                tx,
                since,
                || load_all(tx),
                |at| documents::latest(tx, at),
                |env, level| registers::current(tx, env, level),
            )
        })
    }
}

/// `batch` with every data file it keeps unparsed that does parse as its
/// data instead ([`Content::of_file`]: the one verdict on a file, whoever
/// sent it); `None` when there is none (the usual case: no copy).
fn judge_files(batch: &ImportBatch) -> Option<ImportBatch> {
    let parses =
        |d: &crate::store::ImportDoc| matches!(&d.content, Content::File(f) if f.parse().is_ok());
    if !batch.documents.iter().any(parses) {
        return None;
    }
    let mut judged = batch.clone();
    for doc in &mut judged.documents {
        if let Content::File(file) = &doc.content {
            doc.content = Content::of_file(file.clone());
        }
    }
    Some(judged)
}
