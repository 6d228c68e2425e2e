//! The comparison itself: messages matched by name or API key, fields by
//! name or by position and shape, version by version.
//!
//! Fields are matched and named as the schemas declare them; what a field
//! looks like on the wire in a version (tagged, nullable, compact, and the
//! message flexible) is read from each schema's IR, as the generated code is.

use std::collections::{BTreeMap, BTreeSet};

use super::report::format_versions;
use super::shape::{field_shape, message_shape, TypeSig, MAX_DEPTH};
use super::{Change, ChangeKind};
use crate::ir::{self, FieldIr, MessageIr, StructIr};
use crate::model::{Field, Schema, SchemaSet, Versions};

/// A set of versions, small and ordered.
type VersionSet = BTreeSet<i16>;

/// Compares two schema sets and returns every change, sorted by file,
/// message, path, kind, versions and detail.
///
/// Messages are matched by name. A request or response (any kind with an API
/// key) present only in the old set whose API key and kind reappear under a
/// new name only in the new set is reported as
/// [`ChangeKind::ApiRenamed`] and compared like a matched pair. Other
/// unmatched messages are reported as [`ChangeKind::MessageRemoved`] or
/// [`ChangeKind::MessageAdded`].
///
/// Files that failed to load in either set (see [`unloadable_files`]) are
/// left out of both sides by file name: with their schema unknown, reporting
/// them as added or removed would be wrong.
pub fn diff_sets(old: &SchemaSet, new: &SchemaSet) -> Vec<Change> {
    let skipped: BTreeSet<String> = unloadable_files(old, new).into_iter().collect();
    let by_name = |set: &'_ SchemaSet| -> BTreeMap<String, usize> {
        set.schemas
            .iter()
            .enumerate()
            .filter(|(_, s)| !skipped.contains(&file_name(s)))
            .map(|(i, s)| (s.name.clone(), i))
            .collect()
    };
    let (old_names, new_names) = (by_name(old), by_name(new));
    let mut changes = Vec::new();
    let mut old_only = Vec::new();
    for (name, &i) in &old_names {
        match new_names.get(name) {
            Some(&j) => changes.extend(compare_schemas(&old.schemas[i], &new.schemas[j])),
            None => old_only.push(&old.schemas[i]),
        }
    }
    let mut new_only: Vec<&Schema> = new_names
        .iter()
        .filter(|(name, _)| !old_names.contains_key(*name))
        .map(|(_, &j)| &new.schemas[j])
        .collect();
    for o in old_only {
        let renamed = o.api_key.filter(|_| o.kind.has_api_key()).and_then(|key| {
            new_only
                .iter()
                .position(|n| n.kind == o.kind && n.api_key == Some(key))
        });
        match renamed {
            Some(at) => {
                let n = new_only.remove(at);
                changes.push(message_change(
                    n,
                    ChangeKind::ApiRenamed,
                    n.valid_versions.intersect(o.valid_versions),
                    format!(
                        "{} {} (apiKey {}) renamed from {} ({})",
                        n.name,
                        n.kind.as_str(),
                        api_key_text(n),
                        o.name,
                        file_name(o)
                    ),
                ));
                changes.extend(compare_schemas(o, n));
            }
            None => changes.push(message_change(
                o,
                ChangeKind::MessageRemoved,
                o.valid_versions,
                format!(
                    "{} {}{} removed; peers using versions {} can no longer talk",
                    o.kind.as_str(),
                    o.name,
                    api_key_suffix(o),
                    o.valid_versions
                ),
            )),
        }
    }
    for n in new_only {
        changes.push(message_change(
            n,
            ChangeKind::MessageAdded,
            n.valid_versions,
            format!(
                "new {} {}{} with versions {}",
                n.kind.as_str(),
                n.name,
                api_key_suffix(n),
                n.valid_versions
            ),
        ));
    }
    changes.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
    changes
}

/// The file names (without directories) of files that failed to load in
/// either set, sorted. [`diff_sets`] leaves schemas from files of these names
/// out of both sides.
pub fn unloadable_files(old: &SchemaSet, new: &SchemaSet) -> Vec<String> {
    let names: BTreeSet<String> = old
        .diagnostics
        .iter()
        .chain(&new.diagnostics)
        .filter(|d| d.is_error())
        .filter_map(|d| d.file.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    names.into_iter().collect()
}

fn sort_key(change: &Change) -> (&str, &str, Option<&str>, ChangeKind, i32, &str) {
    let first_version = change
        .versions
        .as_deref()
        .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|v| v.parse::<i32>().ok())
        .unwrap_or(-1);
    (
        &change.file,
        &change.message,
        change.path.as_deref(),
        change.change,
        first_version,
        &change.detail,
    )
}

fn file_name(schema: &Schema) -> String {
    schema.file.file_name().map_or_else(
        || schema.file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn api_key_text(schema: &Schema) -> String {
    schema
        .api_key
        .map_or_else(|| "none".to_owned(), |k| k.to_string())
}

fn api_key_suffix(schema: &Schema) -> String {
    schema
        .api_key
        .map_or_else(String::new, |k| format!(" (apiKey {k})"))
}

fn message_change(schema: &Schema, kind: ChangeKind, versions: Versions, detail: String) -> Change {
    Change {
        file: file_name(schema),
        message: schema.name.clone(),
        path: None,
        versions: Some(versions)
            .filter(|v| !v.is_empty())
            .map(|v| v.to_string()),
        verdict: kind.verdict(),
        change: kind,
        detail,
    }
}

/// The versions of a range, with an open end cut at `cap`.
fn version_set(versions: Versions, cap: i16) -> VersionSet {
    if versions.is_empty() || versions.lowest > cap {
        return VersionSet::new();
    }
    (versions.lowest..=versions.highest.min(cap)).collect()
}

/// Findings of one message pair, grouped by path, kind and detail.
#[derive(Default)]
struct Findings {
    found: BTreeMap<(Option<String>, ChangeKind, String), VersionSet>,
}

impl Findings {
    fn add<'v>(
        &mut self,
        path: Option<String>,
        kind: ChangeKind,
        detail: String,
        versions: impl IntoIterator<Item = &'v i16>,
    ) {
        self.found
            .entry((path, kind, detail))
            .or_default()
            .extend(versions);
    }

    fn add_one(&mut self, path: &str, kind: ChangeKind, detail: String, version: i16) {
        self.add(Some(path.to_owned()), kind, detail, &[version]);
    }

    fn breaking_in(&self, version: i16) -> bool {
        self.found.iter().any(|((_, kind, _), versions)| {
            kind.verdict() == super::Verdict::Breaking && versions.contains(&version)
        })
    }
}

/// Compares one pair of schemas that stand for the same message.
fn compare_schemas(old: &Schema, new: &Schema) -> Vec<Change> {
    let (old_ir, new_ir) = (ir::lower(old), ir::lower(new));
    let (ov, nv) = (old.valid_versions, new.valid_versions);
    let cap = [ov.lowest, nv.lowest, ov.highest, nv.highest]
        .into_iter()
        .filter(|&v| v != i16::MAX)
        .max()
        .unwrap_or(0);
    let old_valid = version_set(ov, cap);
    let new_valid = version_set(nv, cap);
    let shared: VersionSet = old_valid.intersection(&new_valid).copied().collect();
    let removed: VersionSet = old_valid.difference(&new_valid).copied().collect();
    let added: VersionSet = new_valid.difference(&old_valid).copied().collect();

    let mut findings = Findings::default();
    if old.kind != new.kind {
        findings.add(
            None,
            ChangeKind::MessageTypeChanged,
            format!(
                "type changed from {} to {}",
                old.kind.as_str(),
                new.kind.as_str()
            ),
            &shared,
        );
    }
    if old.api_key != new.api_key {
        findings.add(
            None,
            ChangeKind::ApiKeyChanged,
            format!(
                "apiKey changed from {} to {}",
                api_key_text(old),
                api_key_text(new)
            ),
            &shared,
        );
    }
    if !removed.is_empty() {
        findings.add(
            None,
            ChangeKind::VersionRemoved,
            format!(
                "no longer valid (validVersions {ov} -> {nv}); peers that only speak these versions can no longer talk"
            ),
            &removed,
        );
    }
    if !added.is_empty() {
        findings.add(
            None,
            ChangeKind::VersionAdded,
            format!("new versions (validVersions {ov} -> {nv})"),
            &added,
        );
    }
    // The version marked unstable, if any: the highest, when flagged.
    let unstable = |schema: &Schema| {
        schema
            .latest_version_unstable
            .then_some(schema.valid_versions.highest)
    };
    let (old_unstable, new_unstable) = (unstable(old), unstable(new));
    for &version in &shared {
        let (was, is) = (old_unstable == Some(version), new_unstable == Some(version));
        if was != is {
            let detail = if was {
                "no longer unstable: advertised by default"
            } else {
                "now unstable: not advertised by default"
            };
            findings.add(
                None,
                ChangeKind::StabilityChanged,
                detail.to_owned(),
                &[version],
            );
        }
    }
    if let Some(version) = new_unstable.filter(|v| added.contains(v)) {
        findings.add(
            None,
            ChangeKind::StabilityChanged,
            "the new version is unstable: not advertised by default".to_owned(),
            &[version],
        );
    }
    let (of, nf) = (old.flexible_versions, new.flexible_versions);
    let flexibility_changed: VersionSet = shared
        .iter()
        .copied()
        .filter(|&v| old_ir.top().flexible.holds(v) != new_ir.top().flexible.holds(v))
        .collect();
    findings.add(
        None,
        ChangeKind::FlexibleVersionsChanged,
        format!("flexibleVersions changed from {of} to {nf}"),
        &flexibility_changed,
    );
    findings.found.retain(|(_, kind, _), versions| {
        *kind != ChangeKind::FlexibleVersionsChanged || !versions.is_empty()
    });

    let mut fields = FieldComparison {
        old,
        new,
        old_ir: &old_ir,
        new_ir: &new_ir,
        findings,
    };
    let top = Level {
        olds: &old.fields,
        news: &new.fields,
        old_ir: Some(old_ir.top()),
        new_ir: Some(new_ir.top()),
    };
    fields.compare(top, "", &shared, &added, 0);
    let mut findings = fields.findings;

    for &version in &shared {
        if !findings.breaking_in(version)
            && !message_shape(&old_ir, version).accepts(&message_shape(&new_ir, version))
        {
            findings.add(
                None,
                ChangeKind::ShapeChanged,
                "the encoded form of this version changed".to_owned(),
                &[version],
            );
        }
    }

    let file = file_name(new);
    findings
        .found
        .into_iter()
        .map(|((path, kind, detail), versions)| Change {
            file: file.clone(),
            message: new.name.clone(),
            path,
            versions: format_versions(&versions),
            verdict: kind.verdict(),
            change: kind,
            detail,
        })
        .collect()
}

/// A pair of fields standing for the same field: matched by name, or a
/// rename found by position and shape.
struct Pair {
    old: Option<usize>,
    new: Option<usize>,
    renamed: bool,
}

struct FieldComparison<'a> {
    old: &'a Schema,
    new: &'a Schema,
    old_ir: &'a MessageIr,
    new_ir: &'a MessageIr,
    findings: Findings,
}

/// One struct (or the message itself) on both sides: its fields as the
/// schemas declare them, and as the IR lowered them. The IR's side is
/// `None` for a struct reached in no valid version, whose fields then exist
/// in no version compared.
#[derive(Clone, Copy)]
struct Level<'a> {
    olds: &'a [Field],
    news: &'a [Field],
    old_ir: Option<&'a StructIr>,
    new_ir: Option<&'a StructIr>,
}

impl<'a> Level<'a> {
    /// The lowered form of a field of the old side.
    fn old_field(&self, field: &Field) -> Option<&'a FieldIr> {
        self.old_ir?.field(&field.name)
    }

    /// The lowered form of a field of the new side.
    fn new_field(&self, field: &Field) -> Option<&'a FieldIr> {
        self.new_ir?.field(&field.name)
    }
}

/// The lowered struct a lowered field holds, itself or as array elements.
fn nested_struct<'m>(message: &'m MessageIr, field: Option<&FieldIr>) -> Option<&'m StructIr> {
    message.find_struct(field?.kind.struct_name()?)
}

/// The tag of a lowered field in a version where it is tagged.
fn tag_in(field: Option<&FieldIr>, version: i16) -> Option<u32> {
    field.and_then(|f| f.tag_in(version))
}

/// How many characters of a text a detail quotes before cutting it short.
const QUOTE_LIMIT: usize = 100;

/// Describes an `about` text by its length only.
fn about_size(text: Option<&str>) -> String {
    match text {
        None => "none".to_owned(),
        Some(t) => format!("{} characters", t.chars().count()),
    }
}

fn quoted(text: Option<&str>) -> String {
    match text {
        None => "(none)".to_owned(),
        Some(t) if t.chars().count() > QUOTE_LIMIT => {
            let cut: String = t.chars().take(QUOTE_LIMIT).collect();
            format!("\"{cut}...\"")
        }
        Some(t) => format!("\"{t}\""),
    }
}

impl FieldComparison<'_> {
    /// Compares two field lists. `shared` holds the versions both sets know
    /// in which the container exists on both sides; `new_only` the versions
    /// only the new set knows in which the new container exists.
    fn compare(
        &mut self,
        level: Level<'_>,
        prefix: &str,
        shared: &VersionSet,
        new_only: &VersionSet,
        depth: usize,
    ) {
        let (olds, news) = (level.olds, level.news);
        let pairs = self.pair(level, shared, depth);
        for pair in &pairs {
            match (pair.old.map(|i| &olds[i]), pair.new.map(|j| &news[j])) {
                (Some(o), Some(n)) => {
                    self.compare_pair(o, n, pair.renamed, level, prefix, shared, new_only, depth)
                }
                (Some(o), None) => {
                    let path = format!("{prefix}{}", o.name);
                    for &v in shared.iter().filter(|&&v| o.versions.contains(v)) {
                        self.removed_in(v, o, &path, level);
                    }
                }
                (None, Some(n)) => {
                    let path = format!("{prefix}{}", n.name);
                    let mut in_shared = false;
                    for &v in shared.iter().filter(|&&v| n.versions.contains(v)) {
                        in_shared = true;
                        self.added_in(v, n, &path, level);
                    }
                    let in_new: VersionSet = new_only
                        .iter()
                        .copied()
                        .filter(|&v| n.versions.contains(v))
                        .collect();
                    if !in_shared && !in_new.is_empty() {
                        self.findings.add(
                            Some(path),
                            ChangeKind::FieldAddedInNewVersion,
                            format!(
                                "new {} field, only in versions the old schema does not have",
                                n.ty
                            ),
                            &in_new,
                        );
                    }
                }
                (None, None) => {}
            }
        }
        self.check_order(level, &pairs, prefix, shared);
    }

    /// Matches fields by name, then pairs what is left by position: the k-th
    /// unmatched old field and the k-th unmatched new field after the same
    /// number of matched fields are a rename when they coexist in some shared
    /// version and have the same wire shape in every shared version.
    fn pair(&self, level: Level<'_>, shared: &VersionSet, depth: usize) -> Vec<Pair> {
        let (olds, news) = (level.olds, level.news);
        let mut old_match: Vec<Option<usize>> = vec![None; olds.len()];
        let mut new_match: Vec<Option<usize>> = vec![None; news.len()];
        // A name matches only where the two fields meet: a name that a new
        // field reuses in versions the old one never had (Kafka 4.4.0's
        // StreamsGroupHeartbeatResponse gives `AcceptableRecoveryLag` to a
        // new int64 field of v1 and renames the v0 int32 one) is left to the
        // positional pass below, which finds the rename.
        let meets = |o: &Field, n: &Field| {
            let in_shared = |f: &Field| shared.iter().any(|&v| f.versions.contains(v));
            !in_shared(o)
                || shared
                    .iter()
                    .any(|&v| o.versions.contains(v) && n.versions.contains(v))
        };
        for (j, n) in news.iter().enumerate() {
            if let Some(i) = olds
                .iter()
                .enumerate()
                .position(|(i, o)| o.name == n.name && old_match[i].is_none() && meets(o, n))
            {
                old_match[i] = Some(j);
                new_match[j] = Some(i);
            }
        }
        let gaps = |matches: &[Option<usize>]| -> BTreeMap<usize, Vec<usize>> {
            let mut gaps: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
            let mut matched_before = 0;
            for (i, m) in matches.iter().enumerate() {
                match m {
                    Some(_) => matched_before += 1,
                    None => gaps.entry(matched_before).or_default().push(i),
                }
            }
            gaps
        };
        let (old_gaps, new_gaps) = (gaps(&old_match), gaps(&new_match));
        let mut renamed = vec![false; olds.len()];
        for (gap, old_indices) in &old_gaps {
            let Some(new_indices) = new_gaps.get(gap) else {
                continue;
            };
            for (&i, &j) in old_indices.iter().zip(new_indices) {
                if self.same_wire_shape(level, &olds[i], &news[j], shared, depth) {
                    old_match[i] = Some(j);
                    new_match[j] = Some(i);
                    renamed[i] = true;
                }
            }
        }
        let mut pairs: Vec<Pair> = olds
            .iter()
            .enumerate()
            .map(|(i, _)| Pair {
                old: Some(i),
                new: old_match[i],
                renamed: renamed[i],
            })
            .collect();
        pairs.extend(
            new_match
                .iter()
                .enumerate()
                .filter(|(_, m)| m.is_none())
                .map(|(j, _)| Pair {
                    old: None,
                    new: Some(j),
                    renamed: false,
                }),
        );
        pairs
    }

    fn same_wire_shape(
        &self,
        level: Level<'_>,
        o: &Field,
        n: &Field,
        shared: &VersionSet,
        depth: usize,
    ) -> bool {
        let (Some(old_lowered), Some(new_lowered)) = (level.old_field(o), level.new_field(n))
        else {
            // A field the IR leaves out exists in no version compared.
            return false;
        };
        let mut coexist = false;
        for &v in shared {
            match (o.versions.contains(v), n.versions.contains(v)) {
                (false, false) => {}
                (true, true) => {
                    coexist = true;
                    if old_lowered.tag_in(v) != new_lowered.tag_in(v)
                        || field_shape(self.old_ir, old_lowered, v, depth)
                            != field_shape(self.new_ir, new_lowered, v, depth)
                    {
                        return false;
                    }
                }
                _ => return false,
            }
        }
        coexist
    }

    #[allow(clippy::too_many_arguments)]
    fn compare_pair(
        &mut self,
        o: &Field,
        n: &Field,
        renamed: bool,
        level: Level<'_>,
        prefix: &str,
        shared: &VersionSet,
        new_only: &VersionSet,
        depth: usize,
    ) {
        let path = format!("{prefix}{}", n.name);
        let both: VersionSet = shared
            .iter()
            .copied()
            .filter(|&v| o.versions.contains(v) && n.versions.contains(v))
            .collect();
        if renamed {
            self.findings.add(
                Some(format!("{prefix}{}", o.name)),
                ChangeKind::FieldRenamed,
                format!(
                    "renamed {} -> {}; same wire shape, generated code changes",
                    o.name, n.name
                ),
                &both,
            );
        }
        for &v in shared {
            match (o.versions.contains(v), n.versions.contains(v)) {
                (false, true) => self.added_in(v, n, &path, level),
                (true, false) => self.removed_in(v, o, &path, level),
                _ => {}
            }
        }

        let same_sig = TypeSig::of(&o.ty) == TypeSig::of(&n.ty);
        if !same_sig {
            self.findings.add(
                Some(path.clone()),
                ChangeKind::TypeChanged,
                format!("type changed from {} to {}", o.ty, n.ty),
                &both,
            );
        } else if o.ty != n.ty {
            self.findings.add(
                Some(path.clone()),
                ChangeKind::StructRenamed,
                format!(
                    "struct type {} renamed to {}; generated code changes",
                    o.ty, n.ty
                ),
                &both,
            );
        }
        let (old_lowered, new_lowered) = (level.old_field(o), level.new_field(n));
        for &v in &both {
            self.compare_in(v, old_lowered, new_lowered, &path, same_sig);
        }
        self.compare_metadata(o, n, &path, &both);

        if !same_sig || depth >= MAX_DEPTH {
            return;
        }
        let structs =
            o.ty.struct_name()
                .and_then(|name| self.old.find_struct(name))
                .zip(
                    n.ty.struct_name()
                        .and_then(|name| self.new.find_struct(name)),
                );
        if let Some((old_struct, new_struct)) = structs {
            let new_only: VersionSet = new_only
                .iter()
                .copied()
                .filter(|&v| n.versions.contains(v))
                .collect();
            let level = Level {
                olds: &old_struct.fields,
                news: &new_struct.fields,
                old_ir: nested_struct(self.old_ir, old_lowered),
                new_ir: nested_struct(self.new_ir, new_lowered),
            };
            self.compare(level, &format!("{path}."), &both, &new_only, depth + 1);
        }
    }

    /// Compares a field present on both sides in shared version `v`, in
    /// its lowered forms.
    fn compare_in(
        &mut self,
        v: i16,
        o: Option<&FieldIr>,
        n: Option<&FieldIr>,
        path: &str,
        same_sig: bool,
    ) {
        let (old_nullable, new_nullable) = (
            o.is_some_and(|o| o.is_nullable_in(v)),
            n.is_some_and(|n| n.is_nullable_in(v)),
        );
        if old_nullable != new_nullable {
            let detail = if new_nullable {
                "became nullable"
            } else {
                "is no longer nullable"
            };
            self.findings
                .add_one(path, ChangeKind::NullabilityChanged, detail.to_owned(), v);
        }
        match (tag_in(o, v), tag_in(n, v)) {
            (None, Some(tag)) => self.findings.add_one(
                path,
                ChangeKind::TaggingChanged,
                format!("moved from the untagged fields to tagged field {tag}"),
                v,
            ),
            (Some(tag), None) => self.findings.add_one(
                path,
                ChangeKind::TaggingChanged,
                format!("moved from tagged field {tag} to the untagged fields"),
                v,
            ),
            (Some(a), Some(b)) if a != b => self.findings.add_one(
                path,
                ChangeKind::TagChanged,
                format!("tag changed from {a} to {b}"),
                v,
            ),
            _ => {}
        }
        let same_flexibility =
            self.old_ir.top().flexible.holds(v) == self.new_ir.top().flexible.holds(v);
        let (old_compact, new_compact) = (
            o.is_some_and(|o| o.is_compact_in(v)),
            n.is_some_and(|n| n.is_compact_in(v)),
        );
        if same_sig && same_flexibility && old_compact != new_compact {
            let detail = if new_compact {
                "now uses the compact encoding (field flexibleVersions changed)"
            } else {
                "no longer uses the compact encoding (field flexibleVersions changed)"
            };
            self.findings.add_one(
                path,
                ChangeKind::FlexibleVersionsChanged,
                detail.to_owned(),
                v,
            );
        }
    }

    /// Reports changes that leave the bytes alone.
    fn compare_metadata(&mut self, o: &Field, n: &Field, path: &str, both: &VersionSet) {
        let mut add = |kind: ChangeKind, detail: String| {
            self.findings.add(Some(path.to_owned()), kind, detail, both);
        };
        if o.default != n.default {
            add(
                ChangeKind::DefaultChanged,
                format!(
                    "default changed from {} to {}",
                    quoted(o.default_text.as_deref()),
                    quoted(n.default_text.as_deref())
                ),
            );
        }
        if o.about != n.about {
            add(
                ChangeKind::AboutChanged,
                // The texts are not quoted: documentation is prose, and a
                // report should not copy other people's sentences around.
                format!(
                    "about text changed ({} -> {})",
                    about_size(o.about.as_deref()),
                    about_size(n.about.as_deref())
                ),
            );
        }
        if o.ignorable != n.ignorable {
            add(
                ChangeKind::IgnorableChanged,
                format!("ignorable changed from {} to {}", o.ignorable, n.ignorable),
            );
        }
        if o.entity_type != n.entity_type {
            add(
                ChangeKind::EntityTypeChanged,
                format!(
                    "entityType changed from {} to {}",
                    quoted(o.entity_type.as_deref()),
                    quoted(n.entity_type.as_deref())
                ),
            );
        }
        if o.map_key != n.map_key {
            add(
                ChangeKind::MapKeyChanged,
                format!("mapKey changed from {} to {}", o.map_key, n.map_key),
            );
        }
    }

    /// A new field `n` exists in shared version `v`, where the old schema
    /// had no counterpart.
    fn added_in(&mut self, v: i16, n: &Field, path: &str, level: Level<'_>) {
        let (kind, detail) = match tag_in(level.new_field(n), v) {
            Some(tag) => match level
                .olds
                .iter()
                .find(|f| f.versions.contains(v) && tag_in(level.old_field(f), v) == Some(tag))
            {
                Some(previous) => (
                    ChangeKind::TagReused,
                    format!("tag {tag} belonged to {} in the old schema", previous.name),
                ),
                None => (
                    ChangeKind::TaggedFieldAdded,
                    format!(
                        "new tagged field {tag} ({}); peers that do not know it skip it",
                        n.ty
                    ),
                ),
            },
            None => (
                ChangeKind::FieldAdded,
                format!("{} field added to a version that already existed", n.ty),
            ),
        };
        self.findings.add_one(path, kind, detail, v);
    }

    /// An old field `o` no longer exists in shared version `v`.
    fn removed_in(&mut self, v: i16, o: &Field, path: &str, level: Level<'_>) {
        let detail = match tag_in(level.old_field(o), v) {
            Some(tag) => format!(
                "tagged field {tag} ({}) removed from a version that still exists",
                o.ty
            ),
            None => format!("{} field removed from a version that still exists", o.ty),
        };
        self.findings
            .add_one(path, ChangeKind::FieldRemoved, detail, v);
    }

    /// Reports, per shared version, untagged fields present on both sides
    /// that are encoded in another order.
    fn check_order(&mut self, level: Level<'_>, pairs: &[Pair], prefix: &str, shared: &VersionSet) {
        let (olds, news) = (level.olds, level.news);
        let container = Some(prefix.trim_end_matches('.'))
            .filter(|p| !p.is_empty())
            .map(str::to_owned);
        for &v in shared {
            let kept = |pair: &&Pair| -> bool {
                match (pair.old, pair.new) {
                    (Some(i), Some(j)) => {
                        let (o, n) = (&olds[i], &news[j]);
                        o.versions.contains(v)
                            && n.versions.contains(v)
                            && tag_in(level.old_field(o), v).is_none()
                            && tag_in(level.new_field(n), v).is_none()
                    }
                    _ => false,
                }
            };
            let old_order: Vec<usize> = pairs.iter().filter(kept).filter_map(|p| p.new).collect();
            let mut new_order = old_order.clone();
            new_order.sort_unstable();
            if old_order != new_order {
                let names = |order: &[usize]| {
                    order
                        .iter()
                        .map(|&j| news[j].name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                self.findings.add(
                    container.clone(),
                    ChangeKind::FieldOrderChanged,
                    format!(
                        "fields reordered from [{}] to [{}]",
                        names(&old_order),
                        names(&new_order)
                    ),
                    &[v],
                );
            }
        }
    }
}
