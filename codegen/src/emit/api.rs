//! Emits the `ApiKey` enum and the request and response enums that dispatch
//! decoding, encoding and JSON by api key.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::gates::Gates;
use crate::ir::MessageIr;
use crate::primitives::MessageKind;
use crate::rust_source::{doc_attrs, ident};

/// One API: its request and response messages.
struct Api<'m> {
    key: i16,
    name: String,
    request: &'m MessageIr,
    response: &'m MessageIr,
    /// The `cfg` attribute its items carry, if any.
    gate: TokenStream,
}

/// The `api.rs` file: `ApiKey`, `RequestBody` and `ResponseBody`. APIs
/// without both a request and a response schema are left out.
pub fn api_file(messages: &[MessageIr], json: bool, gates: &Gates) -> TokenStream {
    let mut apis: Vec<Api> = messages
        .iter()
        .filter(|m| m.kind == MessageKind::Request)
        .filter_map(|request| {
            let key = request.api_key?;
            let response = messages
                .iter()
                .find(|m| m.kind == MessageKind::Response && m.api_key == Some(key))?;
            let name = request
                .name
                .strip_suffix("Request")
                .unwrap_or(&request.name)
                .to_owned();
            Some(Api {
                key,
                name,
                request,
                response,
                gate: gates.message(request, messages),
            })
        })
        .collect();
    apis.sort_by_key(|a| a.key);
    if apis.is_empty() {
        return TokenStream::new();
    }
    // Everything that needs an API is compiled when any API is.
    let section = gates.any_api(messages);
    let json_gate = gates.json();
    let api_key = api_key_enum(&apis, &section);
    let request = body_enum(&apis, true, json, &section, &json_gate);
    let response = body_enum(&apis, false, json, &section, &json_gate);
    let request_trait = request_trait(&apis, &section);
    quote! {
        #api_key
        #request
        #response
        #request_trait
    }
}

/// The `Request` trait, linking each request type to its response type and
/// api key, and its impls.
fn request_trait(apis: &[Api], section: &TokenStream) -> TokenStream {
    let impls = apis.iter().map(|api| {
        let gate = &api.gate;
        let name = ident(&api.name);
        let (request_module, request) = (ident(&api.request.module_name), ident(&api.request.name));
        let (response_module, response) =
            (ident(&api.response.module_name), ident(&api.response.name));
        // The response borrows as the request does; a request that borrows
        // nothing is answered by a response that owns its data.
        let (generics, request_ty, lifetime) = if api.request.top().has_lifetime {
            (
                quote!(<'a>),
                quote!(#request_module::#request<'a>),
                quote!('a),
            )
        } else {
            (
                TokenStream::new(),
                quote!(#request_module::#request),
                quote!('static),
            )
        };
        let response_ty = if api.response.top().has_lifetime {
            quote!(#response_module::#response<#lifetime>)
        } else {
            quote!(#response_module::#response)
        };
        quote! {
            #gate
            impl #generics Request for #request_ty {
                type Response = #response_ty;
                const API_KEY: ApiKey = ApiKey::#name;
            }
        }
    });
    quote! {
        /// A request message, linked to the type of its response and to its
        /// api key, so that client code can name what a request returns:
        /// `<MetadataRequest<'a> as Request>::Response` is
        /// `MetadataResponse<'a>`.
        #section
        pub trait Request {
            /// The response to this request, borrowing as the request does.
            type Response;
            /// The api this request belongs to.
            const API_KEY: ApiKey;
        }

        #(#impls)*
    }
}

fn api_key_enum(apis: &[Api], section: &TokenStream) -> TokenStream {
    let variants = apis.iter().map(|api| {
        let name = ident(&api.name);
        let key = Literal::i16_unsuffixed(api.key);
        let doc = doc_attrs(&format!("{} (key {}).", api.name, api.key));
        let gate = &api.gate;
        quote!(#doc #gate #name = #key,)
    });
    // Counted by the compiler, so that gated variants drop out of it.
    let count = apis.iter().map(|api| {
        let gate = &api.gate;
        quote!(#gate ())
    });
    let all = apis.iter().map(|api| {
        let name = ident(&api.name);
        let gate = &api.gate;
        quote!(#gate ApiKey::#name)
    });
    let arm = |value: &dyn Fn(&Api) -> TokenStream| -> Vec<TokenStream> {
        apis.iter()
            .map(|api| {
                let name = ident(&api.name);
                let v = value(api);
                let gate = &api.gate;
                quote!(#gate ApiKey::#name => #v,)
            })
            .collect()
    };
    let from_key = apis.iter().map(|api| {
        let name = ident(&api.name);
        let key = Literal::i16_unsuffixed(api.key);
        let gate = &api.gate;
        quote!(#gate #key => ApiKey::#name,)
    });
    let names = arm(&|api| {
        let n = &api.name;
        quote!(#n)
    });
    let lowest = arm(&|api| {
        let v = Literal::i16_unsuffixed(api.request.valid_versions.lowest);
        quote!(#v)
    });
    let highest = arm(&|api| {
        let v = Literal::i16_unsuffixed(api.request.valid_versions.highest);
        quote!(#v)
    });
    let unstable = arm(&|api| {
        let unstable = api.request.latest_version_unstable;
        quote!(#unstable)
    });
    let flexible = arm(&|api| {
        let flexible = api.request.flexible_versions;
        if flexible.is_empty() {
            quote!(None)
        } else {
            let v = Literal::i16_unsuffixed(flexible.lowest);
            quote!(Some(#v))
        }
    });
    // ApiVersions answers with header v0 whatever its version, where it is
    // compiled (a gate that is the impl's own goes without saying).
    let api_versions_header = apis
        .iter()
        .find(|api| api.name == "ApiVersions")
        .map(|api| {
            let same = api.gate.to_string() == section.to_string();
            let gate = (!same).then_some(&api.gate);
            quote! {
                #gate
                if self == ApiKey::ApiVersions {
                    return 0;
                }
            }
        });
    quote! {
        /// Every API this crate knows, by its key.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(i16)]
        #section
        pub enum ApiKey {
            #(#variants)*
        }

        #section
        impl ApiKey {
            /// How many APIs this crate knows.
            pub const COUNT: usize = [#(#count),*].len();

            /// Every API, in key order.
            pub const ALL: [ApiKey; ApiKey::COUNT] = [#(#all),*];

            /// The API with this key.
            pub fn from_key(key: i16) -> Option<ApiKey> {
                Some(match key {
                    #(#from_key)*
                    _ => return None,
                })
            }

            /// The API whose name is `name`, ignoring case, with or without a
            /// `Request` or `Response` suffix.
            pub fn from_name(name: &str) -> Option<ApiKey> {
                let lower = name.to_ascii_lowercase();
                let bare = lower
                    .strip_suffix("request")
                    .or_else(|| lower.strip_suffix("response"))
                    .unwrap_or(&lower);
                ApiKey::ALL
                    .into_iter()
                    .find(|api| api.name().eq_ignore_ascii_case(bare))
            }

            /// The key.
            pub fn key(self) -> i16 {
                self as i16
            }

            /// The name, without the Request or Response suffix.
            pub fn name(self) -> &'static str {
                match self {
                    #(#names)*
                }
            }

            /// The lowest valid version.
            pub fn lowest_version(self) -> i16 {
                match self {
                    #(#lowest)*
                }
            }

            /// The highest valid version, including one still unstable.
            pub fn highest_version(self) -> i16 {
                match self {
                    #(#highest)*
                }
            }

            /// Whether the highest version is unstable, and so not advertised
            /// by default.
            pub fn latest_version_unstable(self) -> bool {
                match self {
                    #(#unstable)*
                }
            }

            /// The highest version that is not unstable.
            pub fn highest_stable_version(self) -> i16 {
                if self.latest_version_unstable() {
                    self.highest_version() - 1
                } else {
                    self.highest_version()
                }
            }

            /// True when `version` is valid for this API.
            pub fn supports_version(self, version: i16) -> bool {
                (self.lowest_version()..=self.highest_version()).contains(&version)
            }

            /// The first flexible version, if any.
            pub fn first_flexible_version(self) -> Option<i16> {
                match self {
                    #(#flexible)*
                }
            }

            /// True when `version` uses compact encodings and tagged fields.
            pub fn is_flexible(self, version: i16) -> bool {
                self.first_flexible_version().is_some_and(|first| version >= first)
            }

            /// The request header version for `version`: 2 when flexible,
            /// 1 otherwise.
            pub fn request_header_version(self, version: i16) -> i16 {
                if self.is_flexible(version) {
                    2
                } else {
                    1
                }
            }

            /// The response header version for `version`: 1 when flexible,
            /// 0 otherwise. ApiVersions responses always use version 0, so
            /// that a client can read them before it knows what the broker
            /// supports.
            pub fn response_header_version(self, version: i16) -> i16 {
                #api_versions_header
                if self.is_flexible(version) {
                    1
                } else {
                    0
                }
            }
        }
    }
}

/// One variant of a dispatch enum.
struct Variant<'m> {
    name: String,
    key: i16,
    message: &'m MessageIr,
    /// The `cfg` attribute of its items, if any.
    gate: TokenStream,
}

/// The pattern that matches `v`'s key: `ApiKey::Name` or the raw number.
fn key_pattern(v: &Variant, keyed: Keyed) -> TokenStream {
    match keyed {
        Keyed::Api => {
            let name = ident(&v.name);
            quote!(ApiKey::#name)
        }
        Keyed::Raw => {
            let key = Literal::i16_unsuffixed(v.key);
            quote!(#key)
        }
    }
}

/// How a dispatch enum is keyed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keyed {
    /// By `ApiKey`, for request and response bodies.
    Api,
    /// By the raw `i16` key, for metadata records.
    Raw,
}

fn body_enum(
    apis: &[Api],
    request: bool,
    json: bool,
    section: &TokenStream,
    json_gate: &TokenStream,
) -> TokenStream {
    let variants: Vec<Variant> = apis
        .iter()
        .map(|api| Variant {
            name: api.name.clone(),
            key: api.key,
            message: if request { api.request } else { api.response },
            gate: api.gate.clone(),
        })
        .collect();
    let gates = Gating {
        section,
        json: json_gate,
    };
    if request {
        dispatch_enum(
            "RequestBody",
            "request body",
            &variants,
            Keyed::Api,
            json,
            gates,
        )
    } else {
        dispatch_enum(
            "ResponseBody",
            "response body",
            &variants,
            Keyed::Api,
            json,
            gates,
        )
    }
}

/// The `cfg` attributes of a dispatch enum's items: the enum's own, and its
/// JSON methods'.
#[derive(Clone, Copy)]
struct Gating<'t> {
    section: &'t TokenStream,
    json: &'t TokenStream,
}

/// `MetadataRecord`: every KRaft metadata record, by record type.
pub fn metadata_enum(messages: &[MessageIr], json: bool, gates: &Gates) -> TokenStream {
    let mut variants: Vec<Variant> = messages
        .iter()
        .filter(|m| m.kind == MessageKind::Metadata)
        .filter_map(|m| {
            Some(Variant {
                name: m.name.strip_suffix("Record").unwrap_or(&m.name).to_owned(),
                key: m.api_key?,
                message: m,
                // The records are gated as one: the enum carries it.
                gate: TokenStream::new(),
            })
        })
        .collect();
    variants.sort_by_key(|v| v.key);
    if variants.is_empty() {
        return TokenStream::new();
    }
    let (section, json_gate) = (gates.records(), gates.json());
    dispatch_enum(
        "MetadataRecord",
        "metadata record",
        &variants,
        Keyed::Raw,
        json,
        Gating {
            section: &section,
            json: &json_gate,
        },
    )
}

fn dispatch_enum(
    enum_name: &str,
    what: &str,
    variants: &[Variant],
    keyed: Keyed,
    json: bool,
    gating: Gating<'_>,
) -> TokenStream {
    let section = gating.section;
    let enum_name = format_ident!("{}", enum_name);
    let any_borrows = variants.iter().any(|v| v.message.top().has_lifetime);
    let generics = if any_borrows {
        quote!(<'a>)
    } else {
        TokenStream::new()
    };
    let message_type = |v: &Variant| {
        let module = ident(&v.message.module_name);
        let ty = ident(&v.message.name);
        if v.message.top().has_lifetime {
            quote!(#module::#ty<'a>)
        } else {
            quote!(#module::#ty)
        }
    };
    let variant_defs = variants.iter().map(|v| {
        let name = ident(&v.name);
        let ty = message_type(v);
        let doc = doc_attrs(&format!("A {} (key {}).", v.message.name, v.key));
        let gate = &v.gate;
        quote!(#doc #gate #name(#ty),)
    });
    let decode = variants.iter().map(|v| {
        let name = ident(&v.name);
        let key = key_pattern(v, keyed);
        let gate = &v.gate;
        // A `match` rather than `Result::map` (a generic function and a
        // closure shim per message) or `?` (a drop of the `Result` per
        // message, in release builds).
        quote! {
            #gate #key => match rt::Message::decode_with(input, version, options) {
                Ok(message) => Ok(Self::#name(message)),
                Err(e) => Err(e),
            },
        }
    });
    let validate = variants.iter().map(|v| {
        let key = key_pattern(v, keyed);
        let ty = message_type(v);
        let gate = &v.gate;
        quote!(#gate #key => <#ty as rt::Message>::validate(input, version),)
    });
    let defaults = variants.iter().map(|v| {
        let name = ident(&v.name);
        let key = key_pattern(v, keyed);
        let gate = &v.gate;
        match keyed {
            Keyed::Api => quote!(#gate #key => Self::#name(Default::default()),),
            Keyed::Raw => quote!(#gate #key => Some(Self::#name(Default::default())),),
        }
    });
    let default_for = match keyed {
        Keyed::Api => quote! {
            /// The message of this api, every field at its default.
            pub fn default_for(api_key: ApiKey) -> Self {
                match api_key {
                    #(#defaults)*
                }
            }
        },
        Keyed::Raw => quote! {
            /// The record of this type, every field at its default, or `None`
            /// for an unknown type.
            pub fn default_for(record_type: i16) -> Option<Self> {
                match record_type {
                    #(#defaults)*
                    _ => None,
                }
            }
        },
    };
    let key_of = variants.iter().map(|v| {
        let name = ident(&v.name);
        let key = key_pattern(v, keyed);
        let gate = &v.gate;
        quote!(#gate Self::#name(_) => #key,)
    });
    let per_variant = |body: &dyn Fn(&proc_macro2::Ident) -> TokenStream| -> Vec<TokenStream> {
        variants
            .iter()
            .map(|v| {
                let arm = body(&ident(&v.name));
                let gate = &v.gate;
                quote!(#gate #arm)
            })
            .collect()
    };
    let encode = per_variant(
        &|name| quote!(Self::#name(m) => rt::Message::encode_to_writer(m, writer, version),),
    );
    let len = per_variant(&|name| quote!(Self::#name(m) => rt::Encode::encoded_len(m, version),));
    let into_owned = per_variant(
        &|name| quote!(Self::#name(m) => #enum_name::#name(rt::IntoOwned::into_owned(m)),),
    );
    // With gated variants, the one compiled may be alone in the enum, and
    // then it holds no other message.
    let maybe_alone = (variants.len() == 1 || variants.iter().any(|v| !v.gate.is_empty()))
        .then(|| quote!(#[allow(unreachable_patterns)]));
    let conversions = variants.iter().map(|v| {
        let name = ident(&v.name);
        let ty = message_type(v);
        let from_doc = doc_attrs(&format!("Wraps a {} as a {what}.", v.message.name));
        let try_doc = doc_attrs(&format!(
            "Takes the {} out of a {what}, or gives the {what} back when it holds another message.",
            v.message.name
        ));
        let gate = if v.gate.is_empty() { section } else { &v.gate };
        // The conversions are `#[inline]` even with `precompile`: they move a
        // message in or out of the enum, which costs nothing to compile
        // where they are used, while a `TryFrom` compiled in kafka-wire goes
        // to its message's codegen unit (rustc places a trait impl's
        // methods with the impl's type), and each of those units then
        // carries the debug info of the whole enum, every message in it.
        quote! {
            #gate
            impl<'a> From<#ty> for #enum_name #generics {
                #from_doc
                #[inline]
                fn from(message: #ty) -> Self {
                    Self::#name(message)
                }
            }

            #gate
            impl<'a> TryFrom<#enum_name #generics> for #ty {
                type Error = #enum_name #generics;

                #try_doc
                #[inline]
                fn try_from(body: #enum_name #generics) -> Result<Self, Self::Error> {
                    match body {
                        #enum_name::#name(message) => Ok(message),
                        #maybe_alone
                        other => Err(other),
                    }
                }
            }
        }
    });
    let doc = doc_attrs(&format!(
        "Any {what}, by its key.\n\nEach message is held by value, so that decoding one allocates \
         nothing; the enum is as large as its largest message."
    ));
    let (key_type, key_name, unknown_key, unknown_key_at_reader) = match keyed {
        Keyed::Api => (
            quote!(ApiKey),
            format_ident!("api_key"),
            TokenStream::new(),
            TokenStream::new(),
        ),
        Keyed::Raw => (
            quote!(i16),
            format_ident!("record_type"),
            quote! {
                _ => Err(rt::DecodeError::new(0, rt::DecodeErrorKind::UnknownApiKey(record_type))),
            },
            quote! {
                _ => Err(options.reader(input).error(rt::DecodeErrorKind::UnknownApiKey(record_type))),
            },
        ),
    };
    let json_methods = json.then(|| {
        json_methods(
            variants,
            keyed,
            &key_name,
            &key_type,
            &message_type,
            gating.json,
        )
    });
    let decode_doc = doc_attrs(&format!(
        "Decodes the {what} of `{key_name}` at `version` from exactly `input`."
    ));
    let decode_with_doc = doc_attrs(&format!(
        "Decodes the {what} of `{key_name}` at `version` from exactly `input`, read as \
         `options` say: where `input` lies (for the offsets in errors), and how much heap its \
         arrays of structs may take ([`rt::DecodeOptions::without_heap`]: none)."
    ));
    let validate_doc = doc_attrs(&format!(
        "Checks that `input` is exactly one valid {what} of `{key_name}` at `version`, building \
         nothing: it fails exactly when [`Self::decode`] does, with the same error."
    ));
    let key_doc = doc_attrs(&format!("The `{key_name}` of this {what}."));
    quote! {
        #doc
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        #section
        pub enum #enum_name #generics {
            #(#variant_defs)*
        }

        #section
        impl #generics #enum_name #generics {
            #decode_doc
            pub fn decode(input: &'a [u8], #key_name: #key_type, version: i16) -> Result<Self, rt::DecodeError> {
                Self::decode_with(input, #key_name, version, rt::DecodeOptions::new())
            }

            #decode_with_doc
            pub fn decode_with(
                input: &'a [u8],
                #key_name: #key_type,
                version: i16,
                options: rt::DecodeOptions,
            ) -> Result<Self, rt::DecodeError> {
                match #key_name {
                    #(#decode)*
                    #unknown_key_at_reader
                }
            }

            #validate_doc
            pub fn validate(input: &'a [u8], #key_name: #key_type, version: i16) -> Result<(), rt::DecodeError> {
                match #key_name {
                    #(#validate)*
                    #unknown_key
                }
            }

            #default_for

            #key_doc
            pub fn #key_name(&self) -> #key_type {
                match self {
                    #(#key_of)*
                }
            }

            /// Encodes the message at `version` at the end of `buf`, after
            /// reserving its exact size.
            pub fn encode<B: rt::EncodeBuf + ?Sized>(&self, buf: &mut B, version: i16) -> Result<(), rt::EncodeError> {
                let mut writer = buf.writer();
                writer.reserve(self.encoded_len(version));
                self.encode_to_writer(&mut writer, version)
            }

            /// Encodes the message at `version` through `writer`, which the
            /// caller has made room in.
            pub fn encode_to_writer(&self, writer: &mut rt::Writer<'_>, version: i16) -> Result<(), rt::EncodeError> {
                match self {
                    #(#encode)*
                }
            }

            /// The exact encoded size at `version`.
            pub fn encoded_len(&self, version: i16) -> usize {
                match self {
                    #(#len)*
                }
            }

            #json_methods
        }

        #section
        impl<'a> rt::IntoOwned for #enum_name #generics {
            type Owned = #enum_name<'static>;

            // Compiled where it is called, like every `into_owned` (see
            // emit/owned.rs).
            #[inline]
            fn into_owned(self) -> #enum_name<'static> {
                match self {
                    #(#into_owned)*
                }
            }
        }

        #(#conversions)*
    }
}

/// The body enum's `to_json` and `from_json`, for the runtime's `json`
/// feature.
fn json_methods(
    variants: &[Variant],
    keyed: Keyed,
    key_name: &proc_macro2::Ident,
    key_type: &TokenStream,
    message_type: &dyn Fn(&Variant) -> TokenStream,
    gate: &TokenStream,
) -> TokenStream {
    let json_gate = gate;
    let from_json = variants.iter().map(|v| {
        let name = ident(&v.name);
        let key = key_pattern(v, keyed);
        let ty = message_type(v);
        let gate = &v.gate;
        quote! {
            #gate
            #key => {
                if !<#ty as rt::Message>::supports_version(version) {
                    return Err(rt::JsonError::new(rt::JsonErrorKind::UnsupportedVersion(version)));
                }
                match rt::JsonForm::from_json(value, version) {
                    Ok(message) => Ok(Self::#name(message)),
                    Err(e) => Err(e),
                }
            }
        }
    });
    let to_json = variants.iter().map(|v| {
        let name = ident(&v.name);
        let gate = &v.gate;
        quote!(#gate Self::#name(m) => rt::JsonForm::to_json(m, version),)
    });
    let write_json = super::json::body_write_json(
        variants.iter().map(|v| (ident(&v.name), v.gate.clone())),
        gate,
    );
    let unknown_json = match keyed {
        Keyed::Api => TokenStream::new(),
        Keyed::Raw => quote! {
            _ => Err(rt::JsonError::new(rt::JsonErrorKind::UnknownKey(record_type))),
        },
    };
    quote! {
        /// The JSON form at `version`.
        #json_gate
        pub fn to_json(&self, version: i16) -> rt::json::Value {
            match self {
                #(#to_json)*
            }
        }

        #write_json

        /// Reads the JSON form of the message with this key at `version`.
        #json_gate
        pub fn from_json(value: &rt::json::Value, #key_name: #key_type, version: i16) -> Result<Self, rt::JsonError> {
            match #key_name {
                #(#from_json)*
                #unknown_json
            }
        }
    }
}
