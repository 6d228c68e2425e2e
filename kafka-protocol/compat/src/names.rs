//! The run's own names: topics, groups and transactional ids that carry a
//! prefix unique to the run and to the side, so that a run never meets
//! another's names on a shared cluster, and the two sides of one run never
//! meet each other's when both are the same cluster.
//!
//! Case data writes logical names, `${topic.orders}`, `${group.readers}`,
//! `${txn.payments}` (and `${name.X}` for a name that nothing creates); the
//! run binds them, per side, to `<run>-r-orders` on the reference and
//! `<run>-c-orders` on the candidate, where `<run>` is `kwc-` and eight
//! random hex digits. Normalization maps each side's prefix back to
//! `<run>-`, also inside error messages.

use crate::side::Side;
use crate::template::Bindings;

/// The kinds of names a case may use, as placeholder prefixes.
pub const NAME_KINDS: [&str; 4] = ["topic.", "group.", "txn.", "name."];

/// The names of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunNames {
    run: String,
}

impl RunNames {
    /// Names under `run`, which must be a valid topic name.
    pub fn new(run: impl Into<String>) -> RunNames {
        RunNames { run: run.into() }
    }

    /// Names under a fresh `kwc-XXXXXXXX` (random hex digits).
    pub fn random() -> RunNames {
        let mut bytes = [0u8; 4];
        if getrandom::fill(&mut bytes).is_err() {
            // No system randomness: the clock's nanoseconds and the
            // process id still differ between runs.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            bytes = (nanos ^ std::process::id().rotate_left(16)).to_be_bytes();
        }
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        RunNames::new(format!("kwc-{hex}"))
    }

    /// The run's prefix, such as `kwc-3f9a1c2e`.
    pub fn run(&self) -> &str {
        &self.run
    }

    /// The prefix of `side`'s names: `<run>-r-` or `<run>-c-`.
    pub fn side_prefix(&self, side: Side) -> String {
        let letter = match side {
            Side::Reference => 'r',
            Side::Candidate => 'c',
        };
        format!("{}-{letter}-", self.run)
    }

    /// The name `side` uses for `logical`.
    pub fn name(&self, side: Side, logical: &str) -> String {
        format!("{}{logical}", self.side_prefix(side))
    }

    /// Binds every run name among `placeholders` (`topic.X`, `group.X`,
    /// `txn.X`, `name.X`) to `side`'s name for X.
    pub fn bind<'a>(
        &self,
        side: Side,
        placeholders: impl IntoIterator<Item = &'a str>,
        bindings: &mut Bindings,
    ) {
        for placeholder in placeholders {
            if let Some(logical) = logical_name(placeholder) {
                bindings.insert(placeholder, self.name(side, logical));
            }
        }
    }

    /// `text` with `side`'s prefix written `<run>-`.
    pub fn unprefix(&self, side: Side, text: &str) -> String {
        text.replace(&self.side_prefix(side), "<run>-")
    }

    /// Whether `text` holds one of `side`'s names.
    pub fn mentions(&self, side: Side, text: &str) -> bool {
        text.contains(&self.side_prefix(side))
    }

    /// Whether `name` is one of `side`'s names.
    pub fn owns(&self, side: Side, name: &str) -> bool {
        name.starts_with(&self.side_prefix(side))
    }
}

/// X of a run-name placeholder `topic.X`, `group.X`, `txn.X` or `name.X`.
pub fn logical_name(placeholder: &str) -> Option<&str> {
    NAME_KINDS
        .iter()
        .find_map(|kind| placeholder.strip_prefix(kind))
        .filter(|logical| !logical.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_side_has_its_own_names() {
        let names = RunNames::new("kwc-1");
        let mut reference = Bindings::new();
        names.bind(
            Side::Reference,
            ["topic.a", "group.g", "producerId", "topicId.a"],
            &mut reference,
        );
        assert_eq!(reference.get("topic.a"), Some(&json!("kwc-1-r-a")));
        assert_eq!(reference.get("group.g"), Some(&json!("kwc-1-r-g")));
        assert_eq!(reference.get("producerId"), None);
        assert_eq!(reference.get("topicId.a"), None);
        assert_eq!(names.name(Side::Candidate, "a"), "kwc-1-c-a");
        assert_eq!(
            names.unprefix(Side::Candidate, "Topic 'kwc-1-c-a' already exists."),
            "Topic '<run>-a' already exists."
        );
        assert!(names.owns(Side::Reference, "kwc-1-r-a"));
        assert!(!names.owns(Side::Reference, "kwc-1-c-a"));
        let random = RunNames::random();
        assert!(random.run().starts_with("kwc-") && random.run().len() == 12);
        assert_ne!(random, RunNames::random());
    }
}
