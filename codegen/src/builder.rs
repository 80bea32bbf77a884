//! The build.rs API: a set of templates → one file of modules plus an enum
//! over them.

use crate::module::{self, ModuleOptions};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Why code generation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A file or directory could not be read or written.
    Io {
        /// The path.
        path: PathBuf,
        /// What happened.
        error: std::io::Error,
    },
    /// A template is broken; `diagnostic` says where and why.
    Template {
        /// The template file.
        path: PathBuf,
        /// The rendered diagnostic (rule, JSON path, line:column, snippet).
        diagnostic: String,
    },
    /// Two templates would get the same module name.
    DuplicateName {
        /// The module name.
        name: String,
    },
    /// No template was given.
    NoTemplates,
    /// `OUT_DIR` is not set (not running under cargo) and no output file was
    /// given.
    NoOutDir,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, error } => write!(f, "{}: {error}", path.display()),
            Error::Template { diagnostic, .. } => f.write_str(diagnostic),
            Error::DuplicateName { name } => write!(
                f,
                "two templates compile to the module `{name}`; name one with `template_as`"
            ),
            Error::NoTemplates => f.write_str("no templates given to retort_codegen::Builder"),
            Error::NoOutDir => {
                f.write_str("OUT_DIR is not set; run from build.rs or call Builder::out_file")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// Compiles templates into `$OUT_DIR/retort_templates.rs` (see [`Builder`]).
pub fn compile_templates(paths: &[impl AsRef<Path>]) -> Result<PathBuf, Error> {
    paths
        .iter()
        .fold(Builder::new(), |b, p| b.template(p.as_ref()))
        .compile()
}

/// Compiles a set of templates into one Rust file: a module per template
/// (named after the file, `qwen3-coder.json` → `qwen3_coder`) and an enum
/// over the set.
///
/// Relative paths are relative to `CARGO_MANIFEST_DIR` (the crate being
/// built). [`Builder::compile`] writes the file (only if it changed) and
/// prints `cargo:rerun-if-changed` for every file and directory read;
/// [`Builder::generate`] returns the code without writing anything.
#[derive(Clone, Debug)]
#[must_use]
pub struct Builder {
    templates: Vec<(Option<String>, PathBuf)>,
    dirs: Vec<PathBuf>,
    crate_path: String,
    enum_name: String,
    out_file: Option<PathBuf>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// The code [`Builder::generate`] produced.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The formatted Rust file.
    pub code: String,
    /// Every file and directory read, for `rerun-if-changed`.
    pub inputs: Vec<PathBuf>,
    /// The modules, in order: (module name, template file).
    pub modules: Vec<(String, PathBuf)>,
}

impl Builder {
    /// A builder with no templates, for the `retort` crate, with the enum
    /// called `Model`.
    pub fn new() -> Builder {
        Builder {
            templates: Vec::new(),
            dirs: Vec::new(),
            crate_path: "::retort".into(),
            enum_name: "Model".into(),
            out_file: None,
        }
    }

    /// Adds a template file; its module is named after the file.
    pub fn template(mut self, path: impl Into<PathBuf>) -> Builder {
        self.templates.push((None, path.into()));
        self
    }

    /// Adds a template file under a module name of your choice.
    pub fn template_as(mut self, module: &str, path: impl Into<PathBuf>) -> Builder {
        self.templates.push((Some(module.to_owned()), path.into()));
        self
    }

    /// Adds every `*.json` file of a directory (in name order).
    pub fn templates_in(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.dirs.push(dir.into());
        self
    }

    /// The path of the runtime crate, if it is renamed or re-exported
    /// (default `::retort`).
    pub fn crate_path(mut self, path: &str) -> Builder {
        self.crate_path = path.to_owned();
        self
    }

    /// The name of the enum over the templates (default `Model`).
    pub fn enum_name(mut self, name: &str) -> Builder {
        self.enum_name = name.to_owned();
        self
    }

    /// Where [`Builder::compile`] writes (default
    /// `$OUT_DIR/retort_templates.rs`).
    pub fn out_file(mut self, path: impl Into<PathBuf>) -> Builder {
        self.out_file = Some(path.into());
        self
    }

    fn resolve(path: &Path) -> PathBuf {
        if path.is_absolute() {
            return path.to_owned();
        }
        match std::env::var_os("CARGO_MANIFEST_DIR") {
            Some(dir) => Path::new(&dir).join(path),
            None => path.to_owned(),
        }
    }

    /// Generates the code without writing it.
    pub fn generate(&self) -> Result<Generated, Error> {
        let mut inputs = Vec::new();
        let mut files: Vec<(Option<String>, PathBuf, PathBuf)> = Vec::new();
        for (name, path) in &self.templates {
            files.push((name.clone(), path.clone(), Self::resolve(path)));
        }
        for dir in &self.dirs {
            let full = Self::resolve(dir);
            let io = |error| Error::Io {
                path: full.clone(),
                error,
            };
            let mut found = Vec::new();
            for entry in std::fs::read_dir(&full).map_err(io)? {
                let p = entry.map_err(io)?.path();
                if p.extension().is_some_and(|e| e == "json") {
                    found.push(p);
                }
            }
            found.sort();
            inputs.push(full.clone());
            for p in found {
                let shown = dir.join(p.file_name().unwrap_or_default());
                files.push((None, shown, p));
            }
        }
        if files.is_empty() {
            return Err(Error::NoTemplates);
        }
        let mut names = BTreeSet::new();
        let mut modules = Vec::new();
        let mut items = TokenStream::new();
        for (name, shown, full) in &files {
            let stem = full
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("template");
            let name = name.clone().unwrap_or_else(|| module::module_name(stem));
            if !names.insert(name.clone()) {
                return Err(Error::DuplicateName { name });
            }
            let json = std::fs::read_to_string(full).map_err(|error| Error::Io {
                path: full.clone(),
                error,
            })?;
            inputs.push(full.clone());
            let opts = ModuleOptions {
                name: name.clone(),
                crate_path: self.crate_path.clone(),
                display_path: shown.display().to_string(),
                track_path: None,
            };
            let tokens =
                crate::compile_module(&json, &opts).map_err(|diagnostic| Error::Template {
                    path: full.clone(),
                    diagnostic,
                })?;
            items.extend(tokens);
            let file_name = full
                .file_name()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_owned();
            modules.push((name, PathBuf::from(file_name)));
        }
        items.extend(self.model_enum(&modules)?);
        let code = crate::format(&items).map_err(|diagnostic| Error::Template {
            path: PathBuf::new(),
            diagnostic,
        })?;
        Ok(Generated {
            code,
            inputs,
            modules,
        })
    }

    /// Generates the code, writes it (only when it changed, so that nothing
    /// rebuilds needlessly) and tells cargo what to watch. Returns the file
    /// written.
    pub fn compile(self) -> Result<PathBuf, Error> {
        let generated = self.generate()?;
        for input in &generated.inputs {
            println!("cargo:rerun-if-changed={}", input.display());
        }
        let out = match &self.out_file {
            Some(p) => p.clone(),
            None => Path::new(&std::env::var_os("OUT_DIR").ok_or(Error::NoOutDir)?)
                .join("retort_templates.rs"),
        };
        let unchanged = std::fs::read_to_string(&out).is_ok_and(|old| old == generated.code);
        if !unchanged {
            std::fs::write(&out, &generated.code).map_err(|error| Error::Io {
                path: out.clone(),
                error,
            })?;
        }
        Ok(out)
    }

    fn model_enum(&self, modules: &[(String, PathBuf)]) -> Result<TokenStream, Error> {
        let kr_str = format!("{}::__private", self.crate_path.trim_end_matches("::"));
        let kr = TokenStream::from_str(&kr_str).map_err(|e| Error::Template {
            path: PathBuf::new(),
            diagnostic: format!("invalid crate path `{}`: {e}", self.crate_path),
        })?;
        let model = Ident::new(&self.enum_name, Span::call_site());
        let any_parser = format_ident!("{}Parser", self.enum_name);
        let any_message = format_ident!("{}Message", self.enum_name);
        let mods: Vec<Ident> = modules
            .iter()
            .map(|(m, _)| Ident::new(m, Span::call_site()))
            .collect();
        let variants: Vec<Ident> = modules
            .iter()
            .map(|(m, _)| format_ident!("{}", crate::types::camel_ident(m)))
            .collect();
        let names: Vec<&str> = modules.iter().map(|(m, _)| m.as_str()).collect();
        let files: Vec<String> = modules
            .iter()
            .map(|(_, f)| f.display().to_string())
            .collect();
        let stems: Vec<String> = modules
            .iter()
            .map(|(_, f)| {
                f.file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        let docs: Vec<String> = files.iter().map(|f| format!("`{f}`")).collect();
        // Templates' messages differ in size (one with 70 fields is over a
        // kilobyte), and the enum of them is the user's crate's code: its
        // lint for that is allowed rather than a box per message imposed.
        let model_doc = format!(
            " The templates compiled into this crate ({}).",
            names.join(", ")
        );
        Ok(quote! {
            #[doc = #model_doc]
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
            pub enum #model {
                #(#[doc = #docs] #variants,)*
            }

            impl #model {
                /// Every template, in the order given.
                pub const ALL: &'static [#model] = &[#(#model::#variants),*];

                /// The module name.
                pub const fn name(self) -> &'static str {
                    match self { #(#model::#variants => #names,)* }
                }

                /// The template's file name.
                pub const fn file_name(self) -> &'static str {
                    match self { #(#model::#variants => #files,)* }
                }

                /// The template named by its module name, file name or file
                /// stem.
                pub fn from_name(name: &str) -> ::core::option::Option<#model> {
                    #model::ALL.iter().copied().find(|m| {
                        m.name() == name || m.file_name() == name || m.stem() == name
                    })
                }

                fn stem(self) -> &'static str {
                    match self { #(#model::#variants => #stems,)* }
                }

                /// The compiled template (its run-time form, for inspection).
                pub fn template(self) -> &'static #kr::Template {
                    match self { #(#model::#variants => #mods::template(),)* }
                }

                /// The literal search the template's generated machine runs in
                /// state `ws` (see `retort::machine`); `None` where the state
                /// runs on the engine's scanner. For differential tests.
                #[doc(hidden)]
                pub fn machine_find_literal(self, ws: usize, bytes: &[u8], eos: bool) -> ::core::option::Option<#kr::LiteralHit> {
                    match self { #(#model::#variants => #kr::Machine::find_literal(#mods::Machine, ws, bytes, eos),)* }
                }

                /// The search of starting literals the template's generated
                /// machine runs in state `ws` (see `retort::machine`), the text
                /// following byte `before`; `None` where it declines or the
                /// state has none. For differential tests.
                #[doc(hidden)]
                pub fn machine_find_started(self, ws: usize, bytes: &[u8], before: ::core::option::Option<u8>, eos: bool) -> ::core::option::Option<#kr::LiteralHit> {
                    let mut memo = #kr::StartMemo::default();
                    match self { #(#model::#variants => #kr::Machine::find_started(#mods::Machine, ws, bytes, before, eos, &mut memo, 0),)* }
                }

                /// Whether the template's generated machine decides state `ws` as
                /// a literal state although it has patterns (leading loops and
                /// literals; see `retort::machine`). For differential tests.
                #[doc(hidden)]
                pub fn machine_answers(self, ws: usize) -> bool {
                    match self { #(#model::#variants => #kr::Machine::answers(#mods::Machine, ws),)* }
                }

                /// The quick-path test the template's generated machine runs in
                /// state `ws`; `None` where the engine tests. For differential tests.
                #[doc(hidden)]
                pub fn machine_quick_takes(self, ws: usize, text: &[u8]) -> ::core::option::Option<bool> {
                    match self { #(#model::#variants => #kr::Machine::quick_takes(#mods::Machine, ws, text),)* }
                }

                /// The quick-path test for a one-byte piece the template's
                /// generated machine runs in state `ws`; `None` where the
                /// engine tests. For differential tests.
                #[doc(hidden)]
                pub fn machine_quick_takes_byte(self, ws: usize, b: u8) -> ::core::option::Option<bool> {
                    match self { #(#model::#variants => #kr::Machine::quick_takes_byte(#mods::Machine, ws, b),)* }
                }

                /// The groups the template's generated machine reads off
                /// delimiter `delim`'s match `hay[start..end]` (see
                /// `retort::machine`); `None` where the backtracker decides.
                /// For differential tests.
                #[doc(hidden)]
                pub fn machine_captures(self, delim: usize, hay: &str, start: usize, end: usize) -> ::core::option::Option<::std::vec::Vec<(::std::string::String, ::std::string::String)>> {
                    match self { #(#model::#variants => #kr::Machine::captures(#mods::Machine, delim, hay, start, end),)* }
                }

                /// A parser of this template's output.
                pub fn parser(self, prefix: &str) -> ::core::result::Result<#any_parser, #kr::ParseError> {
                    // One function per template, called through a table: a
                    // `match` that built every template's parser in place
                    // would give this function a stack slot per template
                    // in debug builds (hundreds of KB for a large set).
                    type New = fn(&str) -> ::core::result::Result<#any_parser, #kr::ParseError>;
                    const NEW: &[New] = &[#(|prefix| #mods::Parser::new(prefix).map(#any_parser::#variants),)*];
                    NEW[self as usize](prefix)
                }

                /// A parser that also casts tool-call arguments by `tools`.
                pub fn parser_with_tools(self, prefix: &str, tools: &#kr::Value) -> ::core::result::Result<#any_parser, #kr::ParseError> {
                    type New = fn(&str, &#kr::Value) -> ::core::result::Result<#any_parser, #kr::ParseError>;
                    const NEW: &[New] = &[#(|prefix, tools| #mods::Parser::with_tools(prefix, tools).map(#any_parser::#variants),)*];
                    NEW[self as usize](prefix, tools)
                }
            }

            impl ::core::str::FromStr for #model {
                type Err = #kr::UnknownTemplate;
                fn from_str(name: &str) -> ::core::result::Result<#model, #kr::UnknownTemplate> {
                    #model::from_name(name).ok_or_else(|| #kr::UnknownTemplate::new(name, &[#(#names),*]))
                }
            }

            impl ::core::fmt::Display for #model {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str(self.name())
                }
            }

            /// A parser of any of the compiled templates (enum dispatch).
            #[derive(Debug)]
            pub enum #any_parser {
                #(#[doc = #docs] #variants(#mods::Parser),)*
            }

            impl #any_parser {
                /// Which template this parser runs.
                pub fn model(&self) -> #model {
                    match self { #(#any_parser::#variants(_) => #model::#variants,)* }
                }

                /// The events the prompt produced.
                pub fn initial_events(&self) -> &[#kr::OwnedEvent] {
                    match self { #(#any_parser::#variants(p) => p.initial_events(),)* }
                }

                /// Feeds the next piece of the generation (events name fields
                /// by string, as the field enums differ per template).
                pub fn feed<'a>(&'a mut self, text: &'a str) -> ::core::result::Result<#kr::Events<'a>, #kr::ParseError> {
                    match self { #(#any_parser::#variants(p) => p.feed(text).map(|e| e.untyped()),)* }
                }

                /// Feeds raw bytes.
                pub fn feed_bytes(&mut self, bytes: &[u8]) -> ::core::result::Result<#kr::Events<'_>, #kr::ParseError> {
                    match self { #(#any_parser::#variants(p) => p.feed_bytes(bytes).map(|e| e.untyped()),)* }
                }

                /// Ends the generation: the typed message and the last events.
                pub fn finalize(&mut self) -> ::core::result::Result<(#any_message, #kr::Events<'_>), #kr::ParseError> {
                    match self {
                        #(#any_parser::#variants(p) => p.finalize().map(|(m, e)| (#any_message::#variants(m), e.untyped())),)*
                    }
                }

                /// The region open at the end of what was fed, with what its
                /// opening delimiter captured (see `Parser::open_region`).
                pub fn open_region(&self) -> ::core::option::Option<#kr::OpenRegion<'_>> {
                    match self { #(#any_parser::#variants(p) => p.engine().open_region(),)* }
                }

                /// The template underneath.
                pub fn template(&self) -> &'static #kr::Template {
                    match self { #(#any_parser::#variants(p) => p.engine().template(),)* }
                }
            }

            /// A message of any of the compiled templates.
            #[derive(Clone, Debug, PartialEq)]
            #[allow(clippy::large_enum_variant)]
            pub enum #any_message {
                #(#[doc = #docs] #variants(#mods::Message),)*
            }

            impl #kr::AssistantMessage for #any_message {
                fn content(&self) -> ::core::option::Option<&str> {
                    match self { #(#any_message::#variants(m) => #kr::AssistantMessage::content(m),)* }
                }
                fn reasoning(&self) -> ::core::option::Option<&str> {
                    match self { #(#any_message::#variants(m) => #kr::AssistantMessage::reasoning(m),)* }
                }
                fn tool_calls(&self) -> ::std::vec::Vec<#kr::ToolCall> {
                    match self { #(#any_message::#variants(m) => #kr::AssistantMessage::tool_calls(m),)* }
                }
                fn to_value(&self) -> #kr::Value {
                    match self { #(#any_message::#variants(m) => m.to_value(),)* }
                }
            }

            impl #kr::serde::Serialize for #any_message {
                fn serialize<S: #kr::serde::Serializer>(&self, s: S) -> ::core::result::Result<S::Ok, S::Error> {
                    match self { #(#any_message::#variants(m) => #kr::serde::Serialize::serialize(m, s),)* }
                }
            }
        })
    }
}
