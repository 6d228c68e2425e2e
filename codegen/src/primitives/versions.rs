//! Version ranges as Kafka writes them: `"3"`, `"0-4"`, `"2+"` or `"none"`.

use std::fmt;

/// An inclusive range of versions. `highest == i16::MAX` means open-ended.
/// A range with `lowest > highest` is empty (`none`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Versions {
    /// The first version in the range.
    pub lowest: i16,
    /// The last version in the range, `i16::MAX` when open-ended.
    pub highest: i16,
}

impl Versions {
    /// The empty range, written `none`.
    pub const NONE: Versions = Versions {
        lowest: 0,
        highest: -1,
    };
    /// Every version, written `0+`.
    pub const ALL: Versions = Versions {
        lowest: 0,
        highest: i16::MAX,
    };

    /// The range `lowest..=highest`.
    pub fn new(lowest: i16, highest: i16) -> Self {
        Versions { lowest, highest }
    }

    /// Parses Kafka's spelling of a range.
    pub fn parse(text: &str) -> Result<Versions, String> {
        let text = text.trim();
        if text == "none" {
            return Ok(Versions::NONE);
        }
        let number = |s: &str| -> Result<i16, String> {
            if s.is_empty() || !s.chars().all(|c| c.is_ascii_digit()) {
                return Err(format!(
                    "invalid version range `{text}`; expected `N`, `N-M`, `N+` or `none`"
                ));
            }
            s.parse::<i16>()
                .map_err(|_| format!("version `{s}` in `{text}` does not fit in int16"))
        };
        if let Some(lowest) = text.strip_suffix('+') {
            return Ok(Versions::new(number(lowest)?, i16::MAX));
        }
        if let Some((lowest, highest)) = text.split_once('-') {
            let (lowest, highest) = (number(lowest)?, number(highest)?);
            if lowest > highest {
                return Err(format!("version range `{text}` is backwards"));
            }
            return Ok(Versions::new(lowest, highest));
        }
        let single = number(text)?;
        Ok(Versions::new(single, single))
    }

    /// True when the range holds no version.
    pub fn is_empty(&self) -> bool {
        self.lowest > self.highest
    }

    /// True when the range has no upper bound.
    pub fn is_open_ended(&self) -> bool {
        !self.is_empty() && self.highest == i16::MAX
    }

    /// True when `version` is in the range.
    pub fn contains(&self, version: i16) -> bool {
        self.lowest <= version && version <= self.highest
    }

    /// True when every version of `other` is in this range.
    pub fn contains_all(&self, other: Versions) -> bool {
        other.is_empty() || (self.lowest <= other.lowest && other.highest <= self.highest)
    }

    /// The versions in both ranges.
    pub fn intersect(&self, other: Versions) -> Versions {
        let v = Versions::new(
            self.lowest.max(other.lowest),
            self.highest.min(other.highest),
        );
        if v.is_empty() {
            Versions::NONE
        } else {
            v
        }
    }

    /// The smallest range holding both ranges.
    pub fn hull(&self, other: Versions) -> Versions {
        if self.is_empty() {
            return other;
        }
        if other.is_empty() {
            return *self;
        }
        Versions::new(
            self.lowest.min(other.lowest),
            self.highest.max(other.highest),
        )
    }

    /// Every version in the range, for ranges that are not open-ended.
    pub fn iter(&self) -> impl Iterator<Item = i16> {
        let (lo, hi) = (self.lowest, self.highest);
        (lo..=hi).take_while(move |_| lo <= hi)
    }
}

impl fmt::Display for Versions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            f.write_str("none")
        } else if self.highest == i16::MAX {
            write!(f, "{}+", self.lowest)
        } else if self.lowest == self.highest {
            write!(f, "{}", self.lowest)
        } else {
            write!(f, "{}-{}", self.lowest, self.highest)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_spelling() {
        assert_eq!(Versions::parse("3"), Ok(Versions::new(3, 3)));
        assert_eq!(Versions::parse("0-4"), Ok(Versions::new(0, 4)));
        assert_eq!(Versions::parse("2+"), Ok(Versions::new(2, i16::MAX)));
        assert!(Versions::parse("none").is_ok_and(|v| v.is_empty()));
        assert!(Versions::parse("4-1").is_err());
        assert!(Versions::parse("x").is_err());
        assert!(Versions::parse("-1").is_err());
        assert!(Versions::parse("99999").is_err());
    }

    #[test]
    fn set_operations() {
        let a = Versions::new(0, 4);
        let b = Versions::new(3, i16::MAX);
        assert_eq!(a.intersect(b), Versions::new(3, 4));
        assert!(a.intersect(Versions::new(5, 6)).is_empty());
        assert_eq!(a.hull(b), Versions::ALL);
        assert!(b.contains_all(Versions::new(3, 9)));
        assert!(!a.contains_all(b));
        assert_eq!(a.iter().count(), 5);
        assert_eq!(Versions::NONE.iter().count(), 0);
        assert_eq!(b.to_string(), "3+");
    }
}
