//! Field paths such as `MetadataResponse.topics[3].partitions[0].leader_epoch`,
//! built only when an error travels up through the decoder.

use std::fmt;

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSegment {
    /// A message or struct name at the root.
    Root(&'static str),
    /// A field, by name.
    Field(&'static str),
    /// An element of an array.
    Index(usize),
    /// A tagged field, by tag, when its name is unknown.
    Tag(u32),
}

/// Where in a message an error happened.
///
/// Segments are pushed innermost first while an error propagates outwards,
/// so that the success path never pays for them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPath {
    reversed: Vec<PathSegment>,
}

impl FieldPath {
    /// Adds the segment that encloses everything pushed so far.
    pub fn push_outer(&mut self, segment: PathSegment) {
        self.reversed.push(segment);
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> impl Iterator<Item = &PathSegment> {
        self.reversed.iter().rev()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.reversed.is_empty()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for segment in self.segments() {
            match segment {
                PathSegment::Root(name) => f.write_str(name)?,
                PathSegment::Field(name) if first => f.write_str(name)?,
                PathSegment::Field(name) => write!(f, ".{name}")?,
                PathSegment::Index(i) => write!(f, "[{i}]")?,
                PathSegment::Tag(tag) if first => write!(f, "<tag {tag}>")?,
                PathSegment::Tag(tag) => write!(f, ".<tag {tag}>")?,
            }
            first = false;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_outermost_first() {
        let mut path = FieldPath::default();
        path.push_outer(PathSegment::Field("leader_epoch"));
        path.push_outer(PathSegment::Index(0));
        path.push_outer(PathSegment::Field("partitions"));
        path.push_outer(PathSegment::Index(3));
        path.push_outer(PathSegment::Field("topics"));
        path.push_outer(PathSegment::Root("MetadataResponse"));
        assert_eq!(
            path.to_string(),
            "MetadataResponse.topics[3].partitions[0].leader_epoch"
        );
    }
}
