//! Query strings, read leniently: a malformed query never rejects a request by itself.
//!
//! An endpoint's query parameters are one type, declared with [`query_parameters!`]: the
//! field names are the parameters' names, so the endpoint's declaration (`query:
//! T::PARAMETERS`, which the OpenAPI document lists) and the handler's reading ([`Query`])
//! come from one place. Each value is kept as sent, for the operation's own lenient rules (a
//! bad `limit` takes its default, an unknown `status` matches nothing).

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use std::borrow::Cow;
use std::convert::Infallible;

use super::endpoints::Parameter;

/// A query's pairs, decoded; borrowed from the query string unless decoding changed them.
#[derive(Debug, Clone, Default)]
pub struct QueryParams<'a>(pub Vec<(Cow<'a, str>, Cow<'a, str>)>);

impl<'a> QueryParams<'a> {
    pub fn parse(query: &'a str) -> Self {
        Self(url::form_urlencoded::parse(query.as_bytes()).collect())
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_ref())
    }
}

/// The query parameters of one endpoint as a type.
pub trait QueryParameters: Sized {
    /// Their declarations, in the order the documents list them.
    const PARAMETERS: &'static [Parameter];

    /// The type from the query: the first value of each declared parameter, anything else
    /// ignored.
    fn from_query(query: &QueryParams<'_>) -> Self;
}

/// A handler's typed query: `Query(query): Query<ListStreamsParams>`. Never rejects.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: QueryParameters> FromRequestParts<S> for Query<T> {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Infallible> {
        let query = QueryParams::parse(parts.uri.query().unwrap_or(""));
        Ok(Self(T::from_query(&query)))
    }
}

/// Declares a query type: a struct of `Option<String>` fields named as the parameters, with
/// each parameter's declaration (`required`, `description`, `schema`; always `In::Query`).
#[macro_export]
macro_rules! query_parameters {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                $field:ident: { required: $required:expr, description: $description:expr, schema: $schema:expr $(,)? }
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct $name {
            $( $(#[$field_meta])* pub $field: Option<String>, )*
        }

        impl $crate::query::QueryParameters for $name {
            const PARAMETERS: &'static [$crate::endpoints::Parameter] = &[
                $( $crate::endpoints::Parameter {
                    name: stringify!($field),
                    location: $crate::endpoints::In::Query,
                    required: $required,
                    description: $description,
                    schema: $schema,
                }, )*
            ];

            fn from_query(query: &$crate::query::QueryParams<'_>) -> Self {
                Self { $( $field: query.get(stringify!($field)).map(str::to_owned), )* }
            }
        }
    };
}
