//! `ftl.kind`: which flash translation layer runs the device, a kind of the registry
//! ([`ftl_kind_registry!`]). What the configuration knows of each kind is its entry in
//! `ftl_kinds`; the FTL itself is built by `ftl::build`.

use serde::{Deserialize, Serialize};

/// The registry of FTL kinds, one line each: `(variant of FtlKind, name in ftl.kind,
/// its entry's file in config/ftl_kinds/, its build function under ftl/)`. The first is the
/// default. The macro hands the lines to `$callback`, so the configuration and `ftl`
/// read the same list.
macro_rules! ftl_kind_registry {
    ($callback:ident) => {
        $callback! {
            (Page, "page", page, kinds::page),
            (Dftl, "dftl", dftl, kinds::dftl),
            (Superblock, "superblock", superblock, superblock::build),
            (Fast, "fast", fast, fast::build),
            (Block, "block", block, block_mapped::build),
        }
    };
}
pub(crate) use ftl_kind_registry;

/// `FtlKind` and its names, from the registry lines.
macro_rules! kind_enum {
    ($(($variant:ident, $name:literal, $spec:ident, $($build:ident)::+),)*) => {
        /// Which flash translation layer runs the device (`ftl.kind`): a kind of the
        /// registry ([`ftl_kind_registry!`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum FtlKind {
            $(
                #[doc = concat!("`ftl.kind = \"", $name, "\"`")]
                #[serde(rename = $name)]
                $variant,
            )*
        }

        impl FtlKind {
            /// Every kind, in registry order.
            pub const ALL: [FtlKind; [$($name),*].len()] = [$(FtlKind::$variant),*];

            /// Its name in `ftl.kind`.
            pub fn name(self) -> &'static str {
                match self {
                    $(FtlKind::$variant => $name,)*
                }
            }
        }
    };
}
ftl_kind_registry!(kind_enum);

impl Default for FtlKind {
    /// The first of the registry.
    fn default() -> Self {
        FtlKind::ALL[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_registry() {
        for kind in FtlKind::ALL {
            let value = toml::Value::String(kind.name().to_string());
            assert_eq!(value.try_into::<FtlKind>().unwrap(), kind);
        }
        assert_eq!(FtlKind::default(), FtlKind::Page);
        let err = toml::Value::String("nope".into())
            .try_into::<FtlKind>()
            .unwrap_err()
            .to_string();
        let known: Vec<String> = FtlKind::ALL
            .iter()
            .map(|k| format!("`{}`", k.name()))
            .collect();
        assert!(err.contains(&known.join(", ")), "{err}");
    }
}
