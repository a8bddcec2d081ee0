//! The project as a whole: a config, its contracts and its scenarios, loaded together so
//! that cross-file rules hold (each scenario's skill exists, names and ids are unique,
//! every skill covers both quadrant rows) and contract-dependent defaults are resolved —
//! as found ([`Project`], for `check`) or, for every command that works on it, refused
//! unless valid ([`ValidProject`]).

mod discover;
mod schemas;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{self, Config, Target};
use crate::contract::{self, Contract, FaultKind};
use crate::diag::{Diagnostic, did_you_mean};
use crate::errors::ExpectedError;
use crate::lexicon::Lexicon;
use crate::policy::Policy;
use crate::scenario::{self, Complexity, Scenario};
use crate::schema::{FileKind, parse_as};
use crate::source::{Anchor, Document, SourceFile};
use serde_json::Value;

pub use discover::classify;
pub use schemas::schema_of;

/// Everything loaded, valid or not.
#[derive(Debug, Default)]
pub struct Project {
    /// The config, when one was loaded and is valid.
    pub config: Option<Config>,
    /// The valid contracts, in load order.
    pub contracts: Vec<Contract>,
    /// The valid scenarios, in load order, with defaults resolved.
    pub scenarios: Vec<Scenario>,
    /// The quality policy, when one was loaded and is valid.
    pub policy: Option<crate::policy::Policy>,
}

/// A project that loaded without errors, for a command that works on it: its config is
/// there, and every contract and scenario is valid.
#[derive(Debug)]
pub struct ValidProject {
    /// The config file, as named (`--config`).
    pub path: PathBuf,
    /// The config.
    pub config: Config,
    /// The contracts, in load order.
    pub contracts: Vec<Contract>,
    /// The scenarios, in load order, with defaults resolved.
    pub scenarios: Vec<Scenario>,
    /// The quality policy, when the config names one.
    pub policy: Option<Policy>,
}

impl ValidProject {
    /// The config's target, for a command that needs one: exit 64 when there is none,
    /// `purpose` saying what it is for (the rest of the sentence).
    pub fn target(&self, purpose: &'static str) -> Result<&Target, ExpectedError> {
        self.config
            .target
            .as_ref()
            .ok_or_else(|| ExpectedError::NoTarget {
                config: self.path.clone(),
                purpose,
            })
    }

    /// The refusal lexicon: the built-in one, extended by `checks.refusal_lexicon` (exit
    /// 65 naming the file if it cannot be used).
    pub fn lexicon(&self) -> Result<Arc<Lexicon>, ExpectedError> {
        match &self.config.refusal_lexicon {
            Some(path) => {
                Lexicon::extended(path)
                    .map(Arc::new)
                    .map_err(|reason| ExpectedError::Lexicon {
                        path: path.clone(),
                        reason,
                    })
            }
            None => Ok(Lexicon::builtin()),
        }
    }

    /// `fibon.lock`, beside the config.
    pub fn lock_path(&self) -> PathBuf {
        self.path
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default()
            .join("fibon.lock")
    }
}

/// The config a command needs: exit 64 when there is no file at `path`.
pub fn config_file(path: &Path) -> Result<&Path, ExpectedError> {
    if !path.is_file() {
        return Err(ExpectedError::ConfigNotFound {
            path: path.to_path_buf(),
        });
    }
    Ok(path)
}

/// Loads the project of the config at `path` for a command that needs it valid: exit 64
/// when there is no config, 65 with its errors (as diagnostics) when it is invalid.
pub fn load_valid(path: &Path) -> Result<ValidProject, ExpectedError> {
    let Loaded {
        project,
        diagnostics,
        ..
    } = load_config(config_file(path)?);
    let errors: Vec<Diagnostic> = diagnostics.into_iter().filter(|d| d.is_error()).collect();
    match project.config {
        // A config is kept only when it is valid; without one the load has errors too.
        Some(config) if errors.is_empty() => Ok(ValidProject {
            path: path.to_path_buf(),
            config,
            contracts: project.contracts,
            scenarios: project.scenarios,
            policy: project.policy,
        }),
        _ => Err(ExpectedError::InvalidProject {
            diagnostics: errors,
        }),
    }
}

/// A quality policy named on the command line (`gate --policy`): exit 64 naming it when
/// it cannot be read, 65 with its errors when it is invalid. `None` when the file is not
/// a policy.
pub fn load_policy(path: &Path) -> Result<Option<Policy>, ExpectedError> {
    // Read here too, so that a file that cannot be read is refused as every input named
    // on the command line is (64), not reported as a diagnostic.
    crate::source::read_input(path)?;
    let loaded = load_paths(std::slice::from_ref(&path.to_path_buf()));
    if loaded.has_errors() {
        return Err(ExpectedError::InvalidFile {
            path: path.to_path_buf(),
            diagnostics: loaded
                .diagnostics
                .into_iter()
                .filter(|d| d.is_error())
                .collect(),
        });
    }
    Ok(loaded.project.policy)
}

/// The result of a load: the project, every diagnostic, and how many files were read.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The valid parts.
    pub project: Project,
    /// Every problem in every file, sorted by file and position.
    pub diagnostics: Vec<Diagnostic>,
    /// Files read.
    pub files: usize,
}

impl Loaded {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Loads the project a config file names.
pub fn load_config(path: &Path) -> Loaded {
    let mut loader = Loader::default();
    loader.config_project(path);
    loader.finish()
}

/// Loads the files and folders given on the command line: config files (`fibon.yaml`)
/// bring their whole project; a folder with a `fibon.yaml` is that project; other
/// folders are searched for contracts and scenarios, told apart by their keys.
pub fn load_paths(paths: &[PathBuf]) -> Loaded {
    let mut loader = Loader::default();
    for path in paths {
        if path.is_dir() {
            match discover::config_in(path) {
                Some(cfg) => loader.config_project(&cfg),
                None => {
                    // As in a project: YAML at any depth, JSON at the top or in a
                    // `contracts/` folder (JSON elsewhere is fixtures and schemas).
                    let yaml = discover::walk(path, true, &["yaml", "yml"]);
                    loader.unlisted(yaml.unlisted);
                    let mut files = yaml.files;
                    // The JSON walk lists the same folders again: their problems are
                    // already said.
                    files.extend(
                        discover::walk(path, true, &["json"])
                            .files
                            .into_iter()
                            .filter(|f| {
                                f.parent() == Some(path.as_path())
                                    || f.parent()
                                        .and_then(|d| d.file_name())
                                        .is_some_and(|n| n == "contracts")
                            }),
                    );
                    files.sort();
                    for file in files {
                        loader.classified(&file, false);
                    }
                }
            }
        } else if discover::is_config_name(path) {
            loader.config_project(path);
        } else {
            loader.classified(path, true);
        }
    }
    loader.project_context();
    loader.finish()
}

#[derive(Default)]
struct Loader {
    diags: Vec<Diagnostic>,
    files: usize,
    config: Option<Config>,
    contracts: Vec<(Contract, Arc<Document>)>,
    /// Every scenario file that parsed, valid or not, in load order.
    scenarios: Vec<ScenarioEntry>,
    /// Scenario files were part of the load (so coverage gaps are worth a warning).
    saw_scenarios: bool,
    /// Some contract source could not be read: skip "unknown skill" checks, which would
    /// only repeat that problem.
    contracts_incomplete: bool,
    /// The quality policy.
    policy: Option<crate::policy::Policy>,
    /// Contract files that failed validation, by skill name if it could be read.
    invalid_skills: Vec<String>,
    /// The valid contracts of the enclosing project, when scenario files were named
    /// without any contract: what their `skill` is checked against, nothing more.
    context: Vec<Contract>,
}

/// A scenario file as loaded: its id, skill and complexity as written (for cross-file
/// rules and coverage, even when the file is invalid) and the model when it is valid.
struct ScenarioEntry {
    doc: Arc<Document>,
    id: String,
    skill: String,
    complexity: String,
    model: Option<Scenario>,
}

impl Loader {
    fn read(&mut self, path: &Path) -> Option<Arc<SourceFile>> {
        self.files += 1;
        match SourceFile::read(path) {
            Ok(file) => Some(file),
            Err(d) => {
                self.diags.push(*d);
                None
            }
        }
    }

    /// Scenario files named alone (`check scenarios/x.yaml`, as an editor does) are still
    /// checked against the contracts of their project: the nearest folder above the first
    /// of them with a `fibon.yaml`. Those contracts are context — their own problems are
    /// not reported here (checking them is `check` on the project), and a project whose
    /// contracts cannot all be read leaves the skill check out, as in a project run.
    fn project_context(&mut self) {
        if self.config.is_some()
            || !self.contracts.is_empty()
            || !self.invalid_skills.is_empty()
            || self.contracts_incomplete
        {
            return;
        }
        let Some(first) = self.scenarios.first() else {
            return;
        };
        // Relative folders first, so that messages keep relative paths.
        let given = &first.doc.file.path;
        let Some(config) = given
            .ancestors()
            .skip(1)
            .find_map(discover::config_in)
            .or_else(|| {
                let absolute = std::path::absolute(given).ok()?;
                absolute.ancestors().skip(1).find_map(discover::config_in)
            })
        else {
            return;
        };
        let mut project = Loader::default();
        project.config_project(&config);
        if project.config.is_none() || project.contracts_incomplete {
            self.contracts_incomplete = true;
            return;
        }
        self.invalid_skills = project.invalid_skills;
        self.context = project.contracts.into_iter().map(|(c, _)| c).collect();
    }

    fn config_project(&mut self, path: &Path) {
        let Some(file) = self.read(path) else { return };
        let parsed = parse_as::<config::raw::RawConfig>(schema_of(FileKind::Config), file);
        self.diags.extend(parsed.diags);
        let Some(doc) = parsed.doc else {
            self.contracts_incomplete = true;
            return;
        };
        let Some(raw) = parsed.raw else {
            // The config's shape is broken; still check the files it names, as far as
            // they can be read from it.
            let dir = doc.file.dir();
            let list = |key: &str| -> Vec<PathBuf> {
                match doc.get(&format!("/{key}")) {
                    Some(Value::Array(items)) => items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|p| dir.join(p))
                        .collect(),
                    _ => vec![dir.join(key)],
                }
            };
            let (contracts, scenarios) = (list("contracts"), list("scenarios"));
            self.load_listed(&contracts, &scenarios);
            return;
        };
        let before = self.diags.len();
        let cfg = config::validate(&doc, raw, &mut self.diags);
        let new = &self.diags[before..];
        if new.iter().any(|d| d.code == "missing_path") {
            self.contracts_incomplete = true;
        }
        let config_valid = !new.iter().any(Diagnostic::is_error);
        self.load_listed(&cfg.contracts, &cfg.scenarios);
        if let Some(p) = &cfg.quality_policy {
            self.policy(&p.clone());
        }
        if config_valid {
            self.config = Some(cfg);
        }
    }

    /// The contract and scenario files and folders a config lists (those that exist).
    fn load_listed(&mut self, contracts: &[PathBuf], scenarios: &[PathBuf]) {
        for p in contracts.iter().filter(|p| p.exists()) {
            let found = discover::files_of(p, false, &["yaml", "yml", "json"]);
            if !found.unlisted.is_empty() {
                self.contracts_incomplete = true;
            }
            self.unlisted(found.unlisted);
            for f in found.files {
                self.contract(&f);
            }
        }
        for p in scenarios.iter().filter(|p| p.exists()) {
            self.saw_scenarios = true;
            let found = discover::files_of(p, true, &["yaml", "yml"]);
            self.unlisted(found.unlisted);
            for f in found.files {
                self.scenario(&f);
            }
        }
    }

    /// Folders that could not be listed: an error each, as an unreadable file is (what
    /// they hold would otherwise be left out of the run unsaid).
    fn unlisted(&mut self, folders: Vec<(PathBuf, String)>) {
        for (dir, why) in folders {
            self.diags.push(
                Diagnostic::error(
                    "io",
                    format!("cannot list the folder {}: {why}", dir.display()),
                )
                .with_help("check that the folder is readable, or remove it from the config"),
            );
        }
    }

    /// A file whose kind is told by its content.
    fn classified(&mut self, path: &Path, explicit: bool) {
        let kind = match SourceFile::read(path).map(Document::parse) {
            Ok(Ok((doc, _))) => classify(&doc.value, path),
            // Unreadable or broken: report it as whatever the path suggests.
            _ => Some(discover::kind_from_path(path).unwrap_or(FileKind::Contract)),
        };
        match kind {
            Some(FileKind::Contract) => self.contract(path),
            Some(FileKind::Scenario) => {
                self.saw_scenarios = true;
                self.scenario(path)
            }
            Some(FileKind::Config) => self.config_project(path),
            Some(FileKind::Policy) => self.policy(path),
            None if explicit => {
                self.files += 1;
                let d = Diagnostic::error("unknown_kind", format!("cannot tell whether {} is a contract, a scenario or a config", path.display()))
                    .with_help("a contract has `skill` or `skill_name`; a scenario has `id`, `complexity` and `input`; a config is named fibon.yaml");
                self.diags.push(match SourceFile::read(path) {
                    Ok(f) => d.at(&f, 0..0, "this file"),
                    Err(_) => d,
                });
            }
            // Folders hold fixtures and schemas too: skip what is neither.
            None => {}
        }
    }

    fn policy(&mut self, path: &Path) {
        let Some(file) = self.read(path) else { return };
        let parsed = parse_as::<crate::policy::raw::RawPolicy>(schema_of(FileKind::Policy), file);
        self.diags.extend(parsed.diags);
        if let (Some(doc), Some(raw)) = (parsed.doc, parsed.raw) {
            self.policy = crate::policy::validate(&doc, raw, &mut self.diags);
        }
    }

    fn contract(&mut self, path: &Path) {
        let Some(file) = self.read(path) else {
            // Its skill is unknown: scenarios naming it are not "unknown skill" too.
            self.contracts_incomplete = true;
            return;
        };
        let parsed = parse_as::<contract::raw::RawContract>(schema_of(FileKind::Contract), file);
        self.diags.extend(parsed.diags);
        let name = parsed.doc.as_ref().and_then(|d| {
            d.get("/skill")
                .or_else(|| d.get("/skill_name"))
                .and_then(|v| v.as_str())
                .map(String::from)
        });
        match (parsed.doc, parsed.raw) {
            (Some(doc), Some(raw)) => match contract::validate(&doc, raw, &mut self.diags) {
                Some(c) => self.contracts.push((c, doc)),
                None => self.invalid_skills.extend(name),
            },
            _ => match name {
                Some(n) => self.invalid_skills.push(n),
                None => self.contracts_incomplete = true,
            },
        }
    }

    fn scenario(&mut self, path: &Path) {
        let Some(file) = self.read(path) else { return };
        let parsed = parse_as::<scenario::raw::RawScenario>(schema_of(FileKind::Scenario), file);
        self.diags.extend(parsed.diags);
        let Some(doc) = parsed.doc else { return };
        let field = |p| {
            doc.get(p)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        let (id, skill, complexity) = (field("/id"), field("/skill"), field("/complexity"));
        let model = parsed
            .raw
            .and_then(|raw| scenario::validate(&doc, raw, &mut self.diags));
        self.scenarios.push(ScenarioEntry {
            doc,
            id,
            skill,
            complexity,
            model,
        });
    }

    /// Cross-file rules, then defaults that need the contract.
    fn finish(mut self) -> Loaded {
        let mut contracts: Vec<(Contract, Arc<Document>)> = Vec::new();
        for (c, doc) in std::mem::take(&mut self.contracts) {
            let key = if doc.get("/skill").is_some() {
                "/skill"
            } else {
                "/skill_name"
            };
            if let Some((_, first)) = contracts.iter().find(|(o, _)| o.skill == c.skill) {
                let fk = if first.get("/skill").is_some() {
                    "/skill"
                } else {
                    "/skill_name"
                };
                self.diags.push(
                    doc.error(
                        "duplicate_skill",
                        key,
                        Anchor::Value,
                        format!(
                            "skill `{}` is already defined at {}",
                            c.skill,
                            first.place(fk)
                        ),
                        "defined twice",
                    )
                    .with_help(
                        "skill names are unique: rename one of the two contracts, or merge them",
                    ),
                );
                continue;
            }
            contracts.push((c, doc));
        }
        let entries = std::mem::take(&mut self.scenarios);
        let context = std::mem::take(&mut self.context);
        let mut scenarios: Vec<(Scenario, Arc<Document>)> = Vec::new();
        // (skill, complexity) of every scenario that counts for coverage: valid ones, and
        // invalid ones too, so one error does not bring a second, misleading warning.
        let mut covered: Vec<(String, String)> = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            covered.push((entry.skill.clone(), entry.complexity.clone()));
            if let Some(first) = entries[..i]
                .iter()
                .find(|o| !o.id.is_empty() && o.id == entry.id)
            {
                self.diags.push(
                    entry
                        .doc
                        .error(
                            "duplicate_id",
                            "/id",
                            Anchor::Value,
                            format!(
                                "scenario id `{}` is already used at {}",
                                entry.id,
                                first.doc.place("/id")
                            ),
                            "used twice",
                        )
                        .with_help("scenario ids are unique across the project: rename one"),
                );
                continue;
            }
            let Some(mut s) = entry.model.clone() else {
                continue;
            };
            let doc = &entry.doc;
            let known = || contracts.iter().map(|(c, _)| c).chain(&context);
            match known().find(|c| c.skill == s.skill) {
                Some(c) => {
                    if !self.resolve(&mut s, c, doc) {
                        continue;
                    }
                }
                None if self.invalid_skills.contains(&s.skill) => continue,
                None if self.contracts_incomplete || known().next().is_none() => {}
                None => {
                    let hint = did_you_mean(&s.skill, known().map(|c| c.skill.as_str()));
                    self.diags.push(
                        doc.error("unknown_skill", "/skill", Anchor::Value, format!("no contract for skill `{}`", s.skill), hint.map_or("unknown skill".into(), |h| format!("did you mean `{h}`?")))
                            .with_help(match hint {
                                Some(h) => format!("did you mean `{h}`? a scenario's `skill` names a contract's `skill`"),
                                None => format!("add a contract with `skill: {}`, or name one of: {}", s.skill, known().map(|c| c.skill.as_str()).collect::<Vec<_>>().join(", ")),
                            }),
                    );
                    continue;
                }
            }
            scenarios.push((s, Arc::clone(doc)));
        }
        if self.saw_scenarios {
            for (c, doc) in &contracts {
                let key = if doc.get("/skill").is_some() {
                    "/skill"
                } else {
                    "/skill_name"
                };
                let has = |x: Complexity| {
                    covered
                        .iter()
                        .any(|(s, k)| *s == c.skill && *k == x.to_string())
                };
                let missing: Vec<(Complexity, &str)> = [
                    (Complexity::Simple, "Q1 and Q3"),
                    (Complexity::Complex, "Q2 and Q4"),
                ]
                .into_iter()
                .filter(|(x, _)| !has(*x))
                .collect();
                for (x, quadrants) in missing {
                    self.diags.push(
                        doc.warning("quadrant_coverage", key, Anchor::Value, format!("skill `{}` has no {x} scenario: quadrants {quadrants} are not covered", c.skill), format!("no {x} scenario"))
                            .with_help(format!("add a scenario with `skill: {}` and `complexity: {x}`", c.skill)),
                    );
                }
            }
        }
        crate::diag::sort(&mut self.diags);
        Loaded {
            project: Project {
                config: self.config,
                contracts: contracts.into_iter().map(|(c, _)| c).collect(),
                scenarios: scenarios.into_iter().map(|(s, _)| s).collect(),
                policy: self.policy,
            },
            diagnostics: self.diags,
            files: self.files,
        }
    }

    /// Fills `remove` and `faults` from the contract and checks them against it.
    fn resolve(&mut self, s: &mut Scenario, c: &Contract, doc: &Document) -> bool {
        let mut ok = true;
        for (i, fault) in s.faults.iter().enumerate() {
            // APPROVAL_DENIED defaults to `explicit` (docs/contract.md).
            if *fault != FaultKind::ApprovalDenied && !c.failure_semantics.contains_key(fault) {
                self.diags.push(
                    doc.error("fault_semantics", &format!("/faults/{i}"), Anchor::Value, format!("contract `{}` declares no failure semantics for `{fault}`", c.skill), "no required behaviour")
                        .with_help(format!("add `{fault}: explicit` (or hard, retry_then_degrade, degrade) under `failure_semantics` in {}", c.source.display())),
                );
                ok = false;
            }
        }
        if doc.get("/faults").is_none_or(Value::is_null) {
            // APPROVAL_DENIED cells come from the contract's approval tools, not `remove`.
            s.faults = c
                .failure_semantics
                .keys()
                .copied()
                .filter(|f| *f != FaultKind::ApprovalDenied)
                .collect();
        }
        if doc.get("/remove").is_none_or(Value::is_null) {
            s.remove = if c.trace.must_call_tools.is_empty() {
                c.preconditions.tools.clone()
            } else {
                c.trace.must_call_tools.clone()
            };
        } else {
            for (i, tool) in s.remove.iter().enumerate() {
                if !s.tools.contains_key(tool) && !c.preconditions.tools.contains(tool) {
                    self.diags.push(
                        doc.warning("remove_unknown_tool", &format!("/remove/{i}"), Anchor::Value, format!("`{tool}` is neither a fixture tool of this scenario nor a precondition of `{}`", c.skill), "unknown tool")
                            .with_help("removing a tool the agent never sees tests nothing; check the name"),
                    );
                }
            }
        }
        if s.faults.contains(&FaultKind::SchemaDrift) {
            for tool in s.remove.iter().filter(|t| !s.schema_drift.contains_key(*t)) {
                let i = s
                    .faults
                    .iter()
                    .position(|f| *f == FaultKind::SchemaDrift)
                    .unwrap_or(0);
                self.diags.push(
                    doc.error("schema_drift", &format!("/faults/{i}"), Anchor::Value, format!("SCHEMA_DRIFT needs the older input schema of `{tool}`"), "no drift schema")
                        .with_help(format!("add `schema_drift: {{{tool}: {{type: object, properties: ...}}}}` with the schema an older version advertised")),
                );
                ok = false;
            }
        }
        ok
    }
}
