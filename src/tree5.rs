//! A Puppet environment's directory (`hiera.yaml` version 5 and its
//! `data/`) read as the documents of a Hiera 5 environment, for
//! `hierad import-environment`: every data file its hierarchy can read,
//! placed by [`Layout`] (a resource at the root or at one level value),
//! and the hiera.yaml itself, as resource `hiera` at the root. Everything
//! is read and checked here, before anything is written.

use crate::configdb::model::check_resource_name;
use crate::configdb::unparsed::Content;
use crate::configdb::{LevelPath, LevelValue};
use crate::hiera::{Hash, Value};
use crate::hiera5::{
    CONFIG_RESOURCE, Config, Layout, MODULES_DIR, ORIGIN_RESOURCE, module_config_resource,
};
use crate::tree::{TreeError, TreeFile, read_file, read_puppet_tree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Documents at one level path (what `ops::import_tree` writes).
pub(crate) type LevelDocs = (LevelPath, Vec<TreeFile>);

/// Why a directory cannot be imported; nothing was written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("{}: {reason}", path.display())]
    Config { path: PathBuf, reason: String },
    /// What Puppet itself refuses in the hiera.yaml (the message names it).
    #[error("{0}")]
    Puppet(String),
    #[error("{}: {error}", path.display())]
    Unexpressible {
        error: crate::hiera5::Unexpressible,
        path: PathBuf,
    },
    #[error(transparent)]
    Tree(#[from] TreeError),
    #[error("{}: {reason}", path.display())]
    File { path: PathBuf, reason: String },
}

/// A directory read whole: what the import writes.
#[derive(Debug)]
pub(crate) struct Environment5 {
    /// The new environment's levels, least specific first.
    pub(crate) levels: Vec<String>,
    /// The documents by level path (the root first), each level value
    /// registered by the import.
    pub(crate) docs: Vec<LevelDocs>,
    /// Data files the hierarchy never reads (left out), relative to the
    /// directory.
    pub(crate) unread: Vec<String>,
    /// How many data files were placed.
    pub(crate) files: usize,
    /// Where the hierarchies' files are kept.
    pub(crate) layout: Layout,
    /// The modules whose layer was imported, by name.
    pub(crate) modules: Vec<String>,
    /// Module directories with a hiera.yaml that Puppet does not read as
    /// a layer, and why (relative to the directory).
    pub(crate) modules_left_out: Vec<(String, String)>,
    /// Each glob of the environment's hierarchy (as [`Source`] names it)
    /// and the resources of the files it named, in Ruby's order.
    pub(crate) globbed: BTreeMap<String, Vec<String>>,
}

/// One layer's hiera.yaml: the directory it is in (relative), and it
/// loaded and read.
struct Layer {
    module: Option<String>,
    root: PathBuf,
    loaded: Hash,
    config: Config,
}

/// Reads `dir`: its hiera.yaml (version 5), each module's under
/// `dir/modules` (Puppet's module layer), and every data file under
/// their hierarchies' datadirs.
///
/// # Errors
/// A missing or unreadable hiera.yaml, one that is not version 5 or that
/// has no form in hierad (naming the entry), and any data file that
/// cannot be read or kept (naming it).
pub(crate) fn read(dir: &Path) -> Result<Environment5, Refusal> {
    let env = read_layer(dir, None)?.map_err(|reason| Refusal::Config {
        path: dir.join("hiera.yaml"),
        reason,
    })?;
    let unexpressible = |layer: &Layer| {
        let path = dir.join(&layer.root).join("hiera.yaml");
        move |error| Refusal::Unexpressible { error, path }
    };
    let mut layout = Layout::of(&env.config).map_err(unexpressible(&env))?;
    let mut layers = vec![env];
    let mut modules_left_out = Vec::new();
    for name in module_names(dir)? {
        let module = dir.join(MODULES_DIR).join(&name);
        if !is_module_name(&name) {
            modules_left_out.push((name, "Puppet reads no module of that name".into()));
            continue;
        }
        match read_layer(&module, Some(&name))? {
            Ok(layer) => {
                layout
                    .add_module(&name, &layer.config)
                    .map_err(unexpressible(&layer))?;
                layers.push(layer);
            }
            Err(reason) => modules_left_out.push((name, reason)),
        }
    }
    // Every data file once, though two layers' datadirs hold it.
    let mut found: BTreeMap<String, TreeFile> = BTreeMap::new();
    for layer in &layers {
        for datadir in layer.config.datadirs() {
            let root = dir.join(&layer.root).join(&datadir);
            if !root.is_dir() {
                continue;
            }
            refuse_link(dir, &root)?;
            // A data file that does not parse comes back kept unparsed
            // (`Content::File`) and is stored as such: Hiera fails only
            // the lookups that read it. One whose only fault for Hiera 3
            // is an alias is data to Puppet.
            for mut file in read_puppet_tree(&root)? {
                if let Content::File(kept) = &file.content {
                    if let Some(data) = kept.puppet_data() {
                        file.content = Content::Data(data);
                    }
                }
                found.entry(relative(dir, &file.path)).or_insert(file);
            }
        }
    }
    let mut placed = Placed::new(&layout);
    for (rel, file) in found {
        placed.add(&rel, file)?;
    }
    for layer in &layers {
        let resource = match &layer.module {
            Some(m) => module_config_resource(m),
            None => CONFIG_RESOURCE.into(),
        };
        placed.by_level.entry(None).or_default().push(TreeFile {
            resource,
            path: dir.join(&layer.root).join("hiera.yaml"),
            content: Content::Data(layer.loaded.clone()),
        });
    }
    placed.by_level.entry(None).or_default().push(origin(dir));
    let docs = placed
        .by_level
        .into_iter()
        .map(|(slot, docs)| (LevelPath::new(slot.into_iter().collect()), docs))
        .collect();
    Ok(Environment5 {
        levels: layout.levels(),
        docs,
        unread: placed.unread,
        files: placed.files,
        modules: layers.iter().filter_map(|l| l.module.clone()).collect(),
        modules_left_out,
        globbed: placed.globbed,
        layout,
    })
}

/// The hiera.yaml in `root` (relative to the environment: `modules/NAME`
/// for a module), read and checked; `Ok(Err(why))`: a module's that
/// Puppet does not read as a layer (none, or not version 5).
fn read_layer(root: &Path, module: Option<&str>) -> Result<Result<Layer, String>, Refusal> {
    let path = root.join("hiera.yaml");
    if module.is_some() && !path.is_file() {
        return Ok(Err("it has no hiera.yaml".into()));
    }
    let loaded = read_file(&path)?;
    let version = loaded.get(&Value::str("version"));
    if version != Some(&Value::Int(5)) {
        return Ok(Err(match module {
            // Puppet ignores it, with a warning.
            Some(_) => "its hiera.yaml is not version 5, which Puppet ignores".into(),
            None => "import-environment reads a version 5 hiera.yaml (`version: 5`)".into(),
        }));
    }
    let config = Config::from_value(&path.to_string_lossy(), &Value::Hash(loaded.clone()))
        .map_err(|e| Refusal::Puppet(e.to_string()))?;
    Ok(Ok(Layer {
        module: module.map(str::to_owned),
        root: module.map_or_else(PathBuf::new, |m| Path::new(MODULES_DIR).join(m)),
        loaded,
        config,
    }))
}

/// The directories of `dir/modules` that hold a hiera.yaml, sorted.
fn module_names(dir: &Path) -> Result<Vec<String>, Refusal> {
    let modules = dir.join(MODULES_DIR);
    let Ok(entries) = std::fs::read_dir(&modules) else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Refusal::File {
            path: modules.clone(),
            reason: e.to_string(),
        })?;
        let config = entry.path().join("hiera.yaml");
        if config.is_file() {
            refuse_link(dir, &config)?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// Refuses `path` (under `dir`) when it, or a folder between `dir` and
/// it, is a symbolic link: as `hierad import` never follows one inside a
/// tree (src/tree.rs), what an environment holds is what is imported,
/// not a file or module elsewhere on the machine a link reaches.
fn refuse_link(dir: &Path, path: &Path) -> Result<(), Refusal> {
    let Ok(rel) = path.strip_prefix(dir) else {
        return Ok(());
    };
    let mut at = dir.to_path_buf();
    for part in rel {
        at.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            return Ok(());
        };
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&at).unwrap_or_default();
            return Err(Refusal::File {
                path: at,
                reason: format!(
                    "a symbolic link to {}; import-environment never follows links inside the environment: put a copy there instead (cp -rL)",
                    target.display()
                ),
            });
        }
    }
    Ok(())
}

/// Puppet's module names (`Puppet::Module.is_module_directory_name?`).
fn is_module_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The data files placed so far.
struct Placed<'l> {
    layout: &'l Layout,
    by_level: BTreeMap<Option<LevelValue>, Vec<TreeFile>>,
    /// Which file each place keeps, to refuse two in one.
    kept: BTreeMap<(Option<LevelValue>, String), PathBuf>,
    unread: Vec<String>,
    files: usize,
    globbed: BTreeMap<String, Vec<String>>,
}

impl<'l> Placed<'l> {
    fn new(layout: &'l Layout) -> Placed<'l> {
        Placed {
            layout,
            by_level: BTreeMap::new(),
            kept: BTreeMap::new(),
            unread: Vec::new(),
            files: 0,
            globbed: BTreeMap::new(),
        }
    }

    /// Places the file at `rel` (relative to the environment) wherever a
    /// hierarchy reads it.
    fn add(&mut self, rel: &str, file: TreeFile) -> Result<(), Refusal> {
        let places = self.layout.places(rel);
        if places.is_empty() {
            self.unread.push(rel.to_owned());
            return Ok(());
        }
        self.files += 1;
        for place in places {
            let refuse = |reason: String| Refusal::File {
                path: file.path.clone(),
                reason: format!("hierarchy entry \"{}\": {reason}", place.entry),
            };
            check_resource_name(&place.resource).map_err(|e| refuse(e.to_string()))?;
            if place.glob.is_some()
                && self
                    .layout
                    .leveled_resources()
                    .contains(&place.resource.as_str())
            {
                return Err(refuse(format!(
                    "its glob would keep it in resource \"{}\", which a level keeps other files in",
                    place.resource
                )));
            }
            let slot = match &place.level {
                None => None,
                Some((level, value)) => {
                    Some(LevelValue::new(level.clone(), value.clone()).map_err(|e| {
                        Refusal::File {
                            path: file.path.clone(),
                            reason: format!("its name cannot be a level value: {e}"),
                        }
                    })?)
                }
            };
            match self.kept.get(&(slot.clone(), place.resource.clone())) {
                Some(other) if *other == file.path => continue,
                Some(other) => {
                    return Err(refuse(format!(
                        "it would be kept in resource \"{}\", where {} is kept",
                        place.resource,
                        other.display()
                    )));
                }
                None => {}
            }
            self.kept
                .insert((slot.clone(), place.resource.clone()), file.path.clone());
            if let (Some(glob), None) = (&place.glob, &place.module) {
                self.globbed
                    .entry(glob.clone())
                    .or_default()
                    .push(place.resource.clone());
            }
            self.by_level.entry(slot).or_default().push(TreeFile {
                resource: place.resource,
                path: file.path.clone(),
                content: file.content.clone(),
            });
        }
        Ok(())
    }
}

/// Where the environment came from: `dir` made absolute, as Puppet
/// expands its environmentpath (not resolving links).
fn origin(dir: &Path) -> TreeFile {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut doc = Hash::default();
    doc.insert(
        Value::str("directory"),
        Value::str(absolute.to_string_lossy().trim_end_matches('/')),
    );
    TreeFile {
        resource: ORIGIN_RESOURCE.into(),
        path: absolute,
        content: Content::Data(doc),
    }
}

/// `path` under `dir`, `/`-separated.
fn relative(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The level values the documents are at, by level (what the import
/// registers).
pub(crate) fn level_values(docs: &[LevelDocs]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, _) in docs {
        for pair in path.pairs() {
            out.entry(pair.level.clone())
                .or_default()
                .insert(pair.value.clone());
        }
    }
    out
}
