//! [`ConfigOps`] over a [`Store`]: the operations on a database file the
//! process opens itself (`hierad config --db`, `serve`'s sample loader,
//! `bench load --db`).

use super::{ConfigOps, ImportSummary, LevelDocs, OpsError, Result};
use crate::configdb::unparsed::Unparsed;
use crate::configdb::{
    ComponentRef, ConfigError, Conflict, DocAddress, DocKind, Environment, KeyPath, LevelPath,
    NewComponent, NewEnvironment, NotFound, Version, fold::fold, provenance,
};
use crate::hiera::{Hash, Value};
use crate::store::{DocWrite, ImportBatch, ImportDoc, Store, StoreError, WriteCtx};
use std::sync::Arc;

/// The operations on a store this process holds.
#[derive(Clone)]
pub(crate) struct Local {
    store: Arc<dyn Store>,
    /// The author of every version written ([`local_author`]).
    author: String,
}

impl Local {
    /// The operations on `store`, written by [`local_author`].
    pub(crate) fn new(store: Arc<dyn Store>) -> Local {
        Local {
            store,
            author: local_author(),
        }
    }

    /// The batch an import of `levels` writes: its documents, the
    /// (path, kind)s it replaces, defined in the environment's first
    /// component.
    fn batch(
        &self,
        env: i64,
        levels: &[LevelDocs],
        kind: DocKind,
        replace: bool,
        register: bool,
    ) -> Result<ImportBatch> {
        let environment = self.store.environment(env)?;
        let Some(first) = super::writes::defines_in(&environment) else {
            return Err(OpsError::Refused(format!(
                "environment {env} uses no component, so the resources of the tree cannot be defined; create it with a component"
            )));
        };
        let mut batch = ImportBatch {
            env,
            documents: Vec::new(),
            replace: Vec::new(),
            define_missing_in: Some(first),
            author: Some(self.author.clone()),
            register,
        };
        for (path, files) in levels {
            batch.documents.extend(files.iter().map(|f| ImportDoc {
                path: path.clone(),
                resource: f.resource.clone(),
                kind,
                content: f.content.clone(),
            }));
            if replace {
                batch.replace.push((path.clone(), kind));
            }
        }
        Ok(batch)
    }

    fn ctx(&self) -> WriteCtx<'_> {
        WriteCtx::by(&self.author)
    }
}

/// Who writes when a process writes the database file itself (`hierad
/// config --db`, `doctor --repair`, `serve --import`): `local:` and the
/// name of the process's user in the password database (`uid=N` when it
/// has no entry there). Not `$USER`: a non-login shell (cron, `su -c`,
/// a container) leaves it unset or someone else's. Such a process
/// bypasses the server's authentication, so this says where a version
/// came from rather than proving who.
pub(crate) fn local_author() -> String {
    // whoami reads the effective uid's passwd entry (getpwuid_r).
    match whoami::username() {
        Ok(name) if !name.is_empty() && !name.chars().any(char::is_control) => {
            format!("local:{name}")
        }
        _ => format!("local:uid={}", rustix::process::geteuid().as_raw()),
    }
}

impl ConfigOps for Local {
    fn environment(&self, env: i64) -> Result<Option<Environment>> {
        match self.store.environment(env) {
            Ok(env) => Ok(Some(env)),
            Err(StoreError::Config(ConfigError::NotFound(NotFound::Environment(_)))) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn ensure_component(&self, name: &str, resources: &[String]) -> Result<()> {
        let created = self.store.create_component(&NewComponent {
            id: None,
            name: name.to_owned(),
            resource_definitions: resources.to_vec(),
        });
        match created {
            Ok(_)
            | Err(StoreError::Config(ConfigError::Conflict(Conflict::ComponentName { .. }))) => {
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    fn create_environment(&self, id: i64, new: &super::NewEnv) -> Result<()> {
        self.store.create_environment(&NewEnvironment {
            id: Some(id),
            components: vec![ComponentRef::Name(new.component.clone())],
            hierarchy_levels: new.levels.clone(),
            hiera: new.hiera,
        })?;
        Ok(())
    }

    fn import(
        &self,
        env: i64,
        levels: &[LevelDocs],
        kind: DocKind,
        replace: bool,
        register: bool,
    ) -> Result<ImportSummary> {
        let batch = self.batch(env, levels, kind, replace, register)?;
        Ok(super::writes::import(self.store.as_ref(), &batch)?)
    }

    fn dry_run_import(
        &self,
        env: i64,
        level: &LevelDocs,
        kind: DocKind,
        replace: bool,
        register: bool,
    ) -> Result<crate::api::impact::DryRun> {
        let batch = self.batch(env, std::slice::from_ref(level), kind, replace, register)?;
        super::preview::local_import_dry_run(self.store.as_ref(), &batch)
    }

    fn resource_names(&self, env: i64) -> Result<Vec<String>> {
        let environment = self.store.environment(env)?;
        let mut names = Vec::new();
        for id in environment.components {
            let component = self.store.component(&ComponentRef::Id(id))?;
            names.extend(component.resource_definitions.into_iter().map(|d| d.name));
        }
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn effective(&self, env: i64, path: &LevelPath, resource: &str) -> Result<Hash> {
        self.store.check_registered(env, path)?;
        // The fold's layers: the root's, then each pair's slot.
        let mut layers = Vec::new();
        for n in 0..=path.pairs().len() {
            let prefix = LevelPath::new(path.pairs()[..n].to_vec());
            for kind in DocKind::ALL {
                let at = DocAddress::new(env, prefix.clone(), resource, kind);
                if let Some((_, doc)) = self.store.get(&at, None)? {
                    layers.push(doc);
                }
            }
        }
        Ok(fold(layers.iter()))
    }

    fn show_lookup(
        &self,
        env: i64,
        path: &LevelPath,
        resource: &str,
    ) -> Result<crate::api::ShowLookup> {
        self.store.check_registered(env, path)?;
        let prefixes: Vec<LevelPath> = (0..=path.pairs().len())
            .map(|n| LevelPath::new(path.pairs()[..n].to_vec()))
            .collect();
        let mut stored = Vec::new();
        for prefix in &prefixes {
            for kind in DocKind::ALL {
                let at = DocAddress::new(env, prefix.clone(), resource, kind);
                if let Some((version, doc)) = self.store.get(&at, None)? {
                    stored.push((prefix, kind, version, doc));
                }
            }
        }
        let layers: Vec<provenance::Layer<'_>> = stored
            .iter()
            .map(|(path, kind, version, content)| provenance::Layer {
                path,
                kind: *kind,
                version,
                content,
            })
            .collect();
        let effective = fold(stored.iter().map(|(.., doc)| doc));
        Ok(crate::api::ShowLookup::new(
            effective,
            &provenance::origins(&layers),
        ))
    }

    fn diff(&self, at: &DocAddress, range: &super::diffs::Range) -> Result<crate::api::DiffAnswer> {
        super::diffs::diff(self.store.as_ref(), at, range)
    }

    fn scope(&self, env: i64, node: &str) -> Result<crate::api::NodeScope> {
        let (version, scope) = self.store.scope(env, node, None)?;
        Ok(crate::api::NodeScope {
            node: node.to_owned(),
            scope,
            version: version.number,
            author: version.author,
            created_at: version.created_at,
        })
    }

    fn put_scope(&self, env: i64, node: &str, scope: &super::ResourceContent) -> Result<()> {
        self.store.put_scope(env, node, scope, Some(&self.author))?;
        Ok(())
    }

    fn delete_scope(&self, env: i64, node: &str) -> Result<()> {
        self.store.delete_scope(env, node, Some(&self.author))?;
        Ok(())
    }

    fn scope_history(&self, env: i64, node: &str) -> Result<Vec<Version>> {
        Ok(self.store.scope_history(env, node)?)
    }

    fn stored(&self, at: &DocAddress, version: Option<u64>) -> Result<Hash> {
        self.store.check_registered(at.env, &at.path)?;
        Ok(self
            .store
            .get(at, version)?
            .map(|(_, doc)| doc)
            .unwrap_or_default())
    }

    fn kept_file(&self, at: &DocAddress) -> Result<Option<Unparsed>> {
        self.store.check_registered(at.env, &at.path)?;
        Ok(self.store.kept_file(at)?)
    }

    // Writes check the registers inside their own transaction.
    fn put(&self, at: &DocAddress, doc: &Hash) -> Result<()> {
        self.store
            .write_document(at, DocWrite::Put(doc), self.ctx())?;
        Ok(())
    }

    fn set_key(&self, at: &DocAddress, key: &KeyPath, value: &Value) -> Result<()> {
        super::writes::set_key(self.store.as_ref(), at, key, value.clone(), self.ctx())?;
        Ok(())
    }

    fn history(&self, at: &DocAddress) -> Result<Vec<Version>> {
        self.store.check_registered(at.env, &at.path)?;
        Ok(self.store.history(at)?)
    }

    fn restore(&self, at: &DocAddress, version: u64) -> Result<Version> {
        Ok(self
            .store
            .write_document(at, DocWrite::Restore(version), self.ctx())?)
    }

    fn delete(&self, at: &DocAddress) -> Result<()> {
        self.store
            .write_document(at, DocWrite::Delete, self.ctx())?;
        Ok(())
    }

    fn tags(&self) -> Result<Vec<crate::configdb::Tag>> {
        Ok(self.store.tags()?)
    }

    fn create_tag(&self, name: &str, generation: Option<u64>) -> Result<crate::configdb::Tag> {
        Ok(self
            .store
            .create_tag(name, generation, Some(&self.author))?)
    }

    fn delete_tag(&self, name: &str) -> Result<()> {
        self.store.delete_tag(name)?;
        Ok(())
    }

    fn nodes_changed(
        &self,
        env: i64,
        since: &str,
        resource: Option<&str>,
        keys: &[String],
    ) -> Result<crate::api::impact::NodesChanged> {
        super::preview::local_nodes_changed(self.store.as_ref(), env, since, resource, keys)
    }

    fn dry_run(
        &self,
        at: &DocAddress,
        write: super::Write<'_>,
    ) -> Result<crate::api::impact::DryRun> {
        super::preview::local_dry_run(self.store.as_ref(), at, write)
    }

    fn register(&self, env: i64, level: &str) -> Result<Option<Vec<String>>> {
        Ok(self.store.register(env, level)?)
    }

    fn set_register(&self, env: i64, level: &str, values: Option<&[String]>) -> Result<()> {
        Ok(self.store.set_register(env, level, values)?)
    }

    fn add_to_register(&self, env: i64, level: &str, values: &[String]) -> Result<usize> {
        Ok(self.store.add_to_register(env, level, values)?)
    }

    fn remove_from_register(&self, env: i64, level: &str, values: &[String]) -> Result<usize> {
        Ok(self.store.remove_from_register(env, level, values)?)
    }

    fn resource_content(&self, component: &str, resource: &str) -> Result<super::ResourceContent> {
        let which = ComponentRef::Name(component.to_owned());
        let found = self.store.component(&which)?;
        let definition = found
            .resource_definitions
            .into_iter()
            .find(|d| d.name == resource)
            .ok_or_else(|| {
                StoreError::from(crate::configdb::NotFound::ComponentResource {
                    component: component.to_owned(),
                    resource: resource.to_owned(),
                })
            })?;
        Ok(definition.content)
    }

    fn set_resource_content(
        &self,
        component: &str,
        resource: &str,
        content: &super::ResourceContent,
    ) -> Result<()> {
        let which = ComponentRef::Name(component.to_owned());
        self.store.set_resource_content(&which, resource, content)?;
        Ok(())
    }
}
