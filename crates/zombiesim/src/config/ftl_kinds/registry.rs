//! Each registered kind's entry ([`FtlKind::spec`]), and what the configuration reads
//! of it.

use super::{FtlKindSpec, Mapping};
use crate::config::{ftl_kind_registry, Capabilities, FtlKind};

/// `FtlKind::spec`, from the registry lines.
macro_rules! kind_specs {
    ($(($variant:ident, $name:literal, $spec:ident, $($build:ident)::+),)*) => {
        impl FtlKind {
            /// Its registry entry.
            pub fn spec(self) -> &'static FtlKindSpec {
                match self {
                    $(FtlKind::$variant => &super::$spec::SPEC,)*
                }
            }
        }
    };
}
ftl_kind_registry!(kind_specs);

impl FtlKind {
    /// Whether the FTL maps whole logical blocks (its logical capacity is a whole
    /// number of blocks, and block-granularity buffer policies make sense above it).
    pub fn block_mapped(self) -> bool {
        matches!(self.spec().mapping, Mapping::Blocks(_))
    }

    /// The names of the kinds `which` accepts, in registry order.
    pub fn names_where(which: impl Fn(FtlKind) -> bool) -> Vec<&'static str> {
        FtlKind::ALL
            .into_iter()
            .filter(|k| which(*k))
            .map(FtlKind::name)
            .collect()
    }
}

impl Capabilities {
    /// Of an FTL kind (its registry entry's).
    pub fn of(kind: FtlKind) -> Capabilities {
        kind.spec().capabilities
    }
}
