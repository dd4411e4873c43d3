//! The one list per pluggable kind (host scheduler, device scheduler, interconnect).
//!
//! A kind's `mod.rs` calls [`registry!`] once; adding a piece is its own file (the
//! implementation, its config struct and that struct's kind-trait impl) plus one line in
//! that call's `kinds [...]`. Everything else follows from the line: the config variant and
//! its `kind` spelling, `name()`, `NAMES`, the builder, the static dispatch and
//! `all_defaults()`, which the contract tests and the benchmarks iterate.

/// Expands one kind list. Input, in this order:
///
/// - `config NAME;` (attributes allowed): the config enum, internally tagged by `kind`; each
///   entry `"name" => Variant(ConfigStruct)` becomes `Variant(ConfigStruct)` spelt `"name"`.
///   The struct must carry `#[serde(deny_unknown_fields)]`; a parameterless kind is an empty
///   braced struct (`struct LifoConfig {}`): a unit variant would take any key (serde's
///   `deny_unknown_fields` does not reach it) and a unit struct refuses keys without naming
///   them. `tests/kind_lists.rs` checks every kind.
/// - `dispatch NAME: TRAIT { fn ...; }`: an enum with one variant per entry, holding what the
///   entry builds, and `TRAIT` implemented on it by one `match` per listed method (static
///   dispatch). List every method of `TRAIT` a piece may override, defaulted ones included: a
///   defaulted method left out keeps the default on the enum (host's `is_empty`, the
///   default over the dispatched `len`, is one on purpose).
/// - `kind trait NAME { fn build(&self, ARGS); fn extra(&self, ...) -> T; }`: the trait every
///   config struct implements (`type Built`, `build`, and the listed extra methods, each
///   required or, written with a body, defaulted); the config enum gets `build(ARGS)` and each
///   extra method, dispatched to the variant's struct.
/// - `kinds [ "name" => Variant(ConfigStruct), ... ]`, in documentation order. An entry
///   `mod file: "name" => ...` also declares the module `file` (`file.rs`) and re-exports its
///   public items, so a piece in a file of its own is that file and this one line.
macro_rules! registry {
    (
        $(#[$config_attr:meta])*
        config $Config:ident;
        $(#[$any_attr:meta])*
        dispatch $Any:ident: $Trait:ident {
            $(fn $m:ident(& $($recv:ident)+ $(, $a:ident: $t:ty)*) $(-> $r:ty)?;)*
        }
        $(#[$kind_attr:meta])*
        kind trait $Kind:ident {
            fn build(&$bself:ident $(, $ba:ident: $bt:ty)*);
            $($extra:tt)*
        }
        kinds $kinds:tt
    ) => {
        $crate::registry::registry!(
            @items [$(#[$config_attr])*] $Config, [$(#[$any_attr])*] $Any, $Kind, $kinds
        );

        $(#[$kind_attr])*
        pub trait $Kind {
            /// What the config builds.
            type Built: $Trait;
            fn build(&$bself $(, $ba: $bt)*) -> Self::Built;
            $($extra)*
        }

        impl $Config {
            /// The piece this config describes.
            pub fn build(&$bself $(, $ba: $bt)*) -> $Any {
                $crate::registry::registry!(@build $bself, $Config, $Any, $kinds, ($($ba),*))
            }
        }

        $crate::registry::registry!(@extra $Config, $kinds, $($extra)*);

        // `#[inline]`: a call through the enum becomes the match and a direct call of the
        // kind's method in its caller, not a call of a wrapper that calls it.
        impl $Trait for $Any {
            $(
                #[inline]
                fn $m(& $($recv)+ $(, $a: $t)*) $(-> $r)? {
                    $crate::registry::registry!(@match [$($recv)+] $Any, $kinds, $m, ($($a),*))
                }
            )*
        }
    };

    (
        @items [$(#[$config_attr:meta])*] $Config:ident, [$(#[$any_attr:meta])*] $Any:ident,
        $Kind:ident, [$($(mod $m:ident:)? $name:literal => $V:ident($C:ty)),* $(,)?]
    ) => {
        $($(
            mod $m;
            pub use $m::*;
        )?)*

        $(#[$config_attr])*
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(tag = "kind", deny_unknown_fields)]
        pub enum $Config {
            $(
                #[serde(rename = $name)]
                $V($C),
            )*
        }

        impl $Config {
            /// Every kind's `kind` spelling, in documentation order.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The `kind` spelling of this config.
            pub fn name(&self) -> &'static str {
                match self {
                    $($Config::$V(_) => $name,)*
                }
            }

            /// The kind `kind` with default parameters, None for an unknown kind.
            pub fn default_for(kind: &str) -> Option<Self> {
                let mut table = ::serde_json::Map::new();
                table.insert("kind".into(), ::serde_json::Value::String(kind.into()));
                ::serde_json::from_value(::serde_json::Value::Object(table)).ok()
            }

            /// Every kind with its default parameters, in documentation order.
            pub fn all_defaults() -> Vec<Self> {
                Self::NAMES
                    .iter()
                    .map(|kind| {
                        Self::default_for(kind)
                            .unwrap_or_else(|| panic!("kind {kind}: a key without a default"))
                    })
                    .collect()
            }
        }

        /// Every kind, for static dispatch: one variant per config variant.
        $(#[$any_attr])*
        pub enum $Any {
            $($V(<$C as $Kind>::Built),)*
        }
    };

    (@build $slf:ident, $Config:ident, $Any:ident, [$($(mod $_m:ident:)? $name:literal => $V:ident($C:ty)),* $(,)?], $args:tt) => {
        match $slf {
            $($Config::$V(c) => $Any::$V(c.build $args),)*
        }
    };

    // The kind trait's further methods, one at a time (required `;` or defaulted `{...}`),
    // each dispatched from the config enum to the variant's struct.
    (@extra $Config:ident, $kinds:tt,) => {};
    (
        @extra $Config:ident, $kinds:tt,
        $(#[$a:meta])* fn $e:ident(&$s:ident $(, $ea:ident: $et:ty)*) -> $er:ty;
        $($rest:tt)*
    ) => {
        $crate::registry::registry!(@extra_fn $Config, $kinds, [$(#[$a])*] $e($s $(, $ea: $et)*) $er);
        $crate::registry::registry!(@extra $Config, $kinds, $($rest)*);
    };
    (
        @extra $Config:ident, $kinds:tt,
        $(#[$a:meta])* fn $e:ident(&$s:ident $(, $ea:ident: $et:ty)*) -> $er:ty $body:block
        $($rest:tt)*
    ) => {
        $crate::registry::registry!(@extra_fn $Config, $kinds, [$(#[$a])*] $e($s $(, $ea: $et)*) $er);
        $crate::registry::registry!(@extra $Config, $kinds, $($rest)*);
    };
    (
        @extra_fn $Config:ident, $kinds:tt, [$(#[$a:meta])*]
        $e:ident($s:ident $(, $ea:ident: $et:ty)*) $er:ty
    ) => {
        impl $Config {
            $(#[$a])*
            pub fn $e(&$s $(, $ea: $et)*) -> $er {
                $crate::registry::registry!(@match [$s] $Config, $kinds, $e, ($($ea),*))
            }
        }
    };

    (@match [mut $slf:ident] $($rest:tt)*) => {
        $crate::registry::registry!(@match [$slf] $($rest)*)
    };
    (@match [$slf:ident] $Enum:ident, [$($(mod $_m:ident:)? $name:literal => $V:ident($C:ty)),* $(,)?], $m:ident, $args:tt) => {
        match $slf {
            $($Enum::$V(s) => s.$m $args,)*
        }
    };
}

pub(crate) use registry;
