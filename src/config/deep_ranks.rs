//! `pipeline.ncu.sampling.deep_ranks`: which ranks of a multi-process run take the deep pass. A word
//! of a closed set (`signature`, `all`) or a list of rank numbers; a misspelt word fails while the
//! layer is read, with the nearest word (`check.rs`).

use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The words `deep_ranks` takes besides a list of ranks.
const WORDS: &[&str] = &["signature", "all", "[rank, …]"];

/// Which ranks run the deep pass; the others run the workload unprofiled, so that their peers'
/// collectives complete, and take deep metrics by launch key from the ranks that ran it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DeepRanks {
    /// One rank per distinct launch-key signature (the set of launch keys a rank's first pass
    /// launched in the selected regions): the lowest rank of each.
    #[default]
    Signature,
    /// Every rank.
    All,
    /// These ranks, by number.
    List(Vec<u32>),
}

impl fmt::Display for DeepRanks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeepRanks::Signature => f.write_str("signature"),
            DeepRanks::All => f.write_str("all"),
            DeepRanks::List(ranks) => {
                let ranks: Vec<String> = ranks.iter().map(u32::to_string).collect();
                write!(f, "[{}]", ranks.join(", "))
            }
        }
    }
}

impl Serialize for DeepRanks {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            DeepRanks::List(ranks) => ranks.serialize(serializer),
            word => serializer.serialize_str(&word.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for DeepRanks {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DeepRanksVisitor)
    }
}

struct DeepRanksVisitor;

impl<'de> Visitor<'de> for DeepRanksVisitor {
    type Value = DeepRanks;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`signature`, `all` or a list of rank numbers, e.g. `[0, 4]`")
    }

    fn visit_str<E: de::Error>(self, word: &str) -> Result<DeepRanks, E> {
        match word {
            "signature" => Ok(DeepRanks::Signature),
            "all" => Ok(DeepRanks::All),
            other => Err(E::unknown_variant(other, WORDS)),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<DeepRanks, A::Error> {
        let mut ranks = Vec::new();
        while let Some(rank) = seq.next_element::<u32>()? {
            ranks.push(rank);
        }
        if ranks.is_empty() {
            return Err(de::Error::invalid_length(0, &self));
        }
        ranks.sort_unstable();
        ranks.dedup();
        Ok(DeepRanks::List(ranks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_lists_read_and_write_back() {
        let read = |s: &str| serde_yaml::from_str::<DeepRanks>(s);
        assert_eq!(read("signature").unwrap(), DeepRanks::Signature);
        assert_eq!(read("all").unwrap(), DeepRanks::All);
        assert_eq!(read("[4, 0, 4]").unwrap(), DeepRanks::List(vec![0, 4]));
        let wrong = read("signatures").unwrap_err().to_string();
        assert!(wrong.contains("signature"), "{wrong}");
        assert!(read("[]").is_err(), "no rank would run the deep pass");
        assert!(read("[-1]").is_err());
        let written = serde_yaml::to_string(&DeepRanks::List(vec![0, 2])).unwrap();
        assert_eq!(read(&written).unwrap(), DeepRanks::List(vec![0, 2]));
        assert_eq!(
            serde_yaml::to_string(&DeepRanks::All).unwrap().trim(),
            "all"
        );
    }
}
