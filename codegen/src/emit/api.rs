//! Emits the `ApiKey` enum and the request and response enums that dispatch
//! decoding, encoding and JSON by api key.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::common::{doc_attrs, ident};
use crate::ir::MessageIr;
use crate::model::MessageKind;

/// One API: its request and response messages.
struct Api<'m> {
    key: i16,
    name: String,
    request: &'m MessageIr,
    response: &'m MessageIr,
}

/// The `api.rs` file: `ApiKey`, `RequestBody` and `ResponseBody`. APIs
/// without both a request and a response schema are left out.
pub fn api_file(messages: &[MessageIr]) -> TokenStream {
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
            })
        })
        .collect();
    apis.sort_by_key(|a| a.key);
    if apis.is_empty() {
        return TokenStream::new();
    }
    let api_key = api_key_enum(&apis);
    let request = body_enum(&apis, true);
    let response = body_enum(&apis, false);
    quote! {
        #api_key
        #request
        #response
    }
}

fn api_key_enum(apis: &[Api]) -> TokenStream {
    let variants = apis.iter().map(|api| {
        let name = ident(&api.name);
        let key = Literal::i16_unsuffixed(api.key);
        let doc = doc_attrs(&format!("{} (key {}).", api.name, api.key));
        quote!(#doc #name = #key,)
    });
    let count = apis.len();
    let all = apis.iter().map(|api| {
        let name = ident(&api.name);
        quote!(ApiKey::#name)
    });
    let arm = |value: &dyn Fn(&Api) -> TokenStream| -> Vec<TokenStream> {
        apis.iter()
            .map(|api| {
                let name = ident(&api.name);
                let v = value(api);
                quote!(ApiKey::#name => #v,)
            })
            .collect()
    };
    let from_key = apis.iter().map(|api| {
        let name = ident(&api.name);
        let key = Literal::i16_unsuffixed(api.key);
        quote!(#key => ApiKey::#name,)
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
    let unstable: Vec<TokenStream> = apis
        .iter()
        .filter(|api| api.request.latest_version_unstable)
        .map(|api| {
            let name = ident(&api.name);
            quote!(ApiKey::#name)
        })
        .collect();
    let unstable_body = if unstable.is_empty() {
        quote!(false)
    } else {
        quote!(matches!(self, #(#unstable)|*))
    };
    let flexible = arm(&|api| {
        let flexible = api.request.flexible_versions;
        if flexible.is_empty() {
            quote!(None)
        } else {
            let v = Literal::i16_unsuffixed(flexible.lowest);
            quote!(Some(#v))
        }
    });
    let not_api_versions = apis
        .iter()
        .any(|api| api.name == "ApiVersions")
        .then(|| quote!(self != ApiKey::ApiVersions &&));
    quote! {
        /// Every API this crate knows, by its key.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(i16)]
        pub enum ApiKey {
            #(#variants)*
        }

        impl ApiKey {
            /// Every API, in key order.
            pub const ALL: [ApiKey; #count] = [#(#all),*];

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
                #unstable_body
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
                if #not_api_versions self.is_flexible(version) {
                    1
                } else {
                    0
                }
            }
        }
    }
}

fn body_enum(apis: &[Api], request: bool) -> TokenStream {
    let (enum_name, what) = if request {
        (format_ident!("RequestBody"), "request")
    } else {
        (format_ident!("ResponseBody"), "response")
    };
    fn pick<'m>(api: &Api<'m>, request: bool) -> &'m MessageIr {
        if request {
            api.request
        } else {
            api.response
        }
    }
    let any_borrows = apis.iter().any(|api| pick(api, request).top().has_lifetime);
    let generics = if any_borrows {
        quote!(<'a>)
    } else {
        TokenStream::new()
    };
    let message_type = |api: &Api| {
        let m = pick(api, request);
        let module = ident(&m.module_name);
        let ty = ident(&m.name);
        if m.top().has_lifetime {
            quote!(#module::#ty<'a>)
        } else {
            quote!(#module::#ty)
        }
    };
    let variants = apis.iter().map(|api| {
        let name = ident(&api.name);
        let ty = message_type(api);
        let doc = doc_attrs(&format!("A {} {}.", pick(api, request).name, what));
        quote!(#doc #name(#ty),)
    });
    let per_api = |body: &dyn Fn(&proc_macro2::Ident, &TokenStream) -> TokenStream| {
        apis.iter()
            .map(|api| {
                let name = ident(&api.name);
                let ty = message_type(api);
                body(&name, &ty)
            })
            .collect::<Vec<_>>()
    };
    let decode = per_api(
        &|name, _| quote!(ApiKey::#name => rt::Message::decode(input, version).map(Self::#name),),
    );
    let from_json = per_api(
        &|name, _| quote!(ApiKey::#name => rt::JsonForm::from_json(value, version).map(Self::#name),),
    );
    let api_key = per_api(&|name, _| quote!(Self::#name(_) => ApiKey::#name,));
    let encode =
        per_api(&|name, _| quote!(Self::#name(m) => rt::Message::encode(m, buf, version),));
    let len = per_api(&|name, _| quote!(Self::#name(m) => rt::Encode::encoded_len(m, version),));
    let to_json = per_api(&|name, _| quote!(Self::#name(m) => rt::JsonForm::to_json(m, version),));
    let doc = doc_attrs(&format!("The body of any {what}, by api key."));
    let decode_doc = doc_attrs(&format!(
        "Decodes the {what} body of `api_key` at `version` from exactly `input`."
    ));
    quote! {
        #doc
        #[derive(Debug, Clone, PartialEq)]
        pub enum #enum_name #generics {
            #(#variants)*
        }

        impl #generics #enum_name #generics {
            #decode_doc
            pub fn decode(api_key: ApiKey, version: i16, input: &'a [u8]) -> Result<Self, rt::DecodeError> {
                match api_key {
                    #(#decode)*
                }
            }

            /// The api key of this body.
            pub fn api_key(&self) -> ApiKey {
                match self {
                    #(#api_key)*
                }
            }

            /// Encodes the body at `version`.
            pub fn encode<B: rt::BufMut>(&self, buf: &mut B, version: i16) -> Result<(), rt::EncodeError> {
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

            /// The JSON form at `version`.
            pub fn to_json(&self, version: i16) -> rt::json::Value {
                match self {
                    #(#to_json)*
                }
            }

            /// Reads the JSON form of `api_key`'s body at `version`.
            pub fn from_json(api_key: ApiKey, version: i16, value: &rt::json::Value) -> Result<Self, rt::JsonError> {
                if !api_key.supports_version(version) {
                    return Err(rt::JsonError::new(rt::JsonErrorKind::UnsupportedVersion(version)));
                }
                match api_key {
                    #(#from_json)*
                }
            }
        }
    }
}
