//! `admin`: operator commands against the store the environment names (`STORE`, default
//! `dynamodb`, with `TABLE_NAME` and the AWS settings). Keys are printed once, at creation;
//! only their hash is stored.

use std::process::ExitCode;

use chrono::{DateTime, Utc};
use clap::{Parser, Subcommand};
use hosting_app::seed::Seed;
use hosting_aws::dynamodb::DynamoStore;
use hosting_domain::account::{self, KeyEnvironment, LIVE_COMMERCE};
use hosting_domain::ports::{AccountStore, AdminStore, Outbox, Store};
use hosting_domain::usage::period::BillingCycle;
use hosting_domain::{ApiKey, Brand, Creator, Plan, Scope};
use hosting_support::config::{Config, StoreKind};

#[derive(Parser)]
#[command(
    name = "admin",
    about = "Operator commands for the Live Stream Hosting API",
    long_about = "Operator commands for the Live Stream Hosting API: brands, plans, keys, \
                  billing cycles, creators, seed files and the outbox, against its DynamoDB table.",
    after_help = "Environment:\n  \
        TABLE_NAME         the DynamoDB table (required; the stack output TableName)\n  \
        SECRETS_KEY_ID     for seal-secrets: the stack output SecretsKeyArn\n  \
        DELIVERY_QUEUE_URL and DELIVERY_DLQ_URL, for deliveries-replay (stack outputs)\n  \
        AWS_REGION         and credentials, as the AWS SDK reads them (profile, env, SSO)\n  \
        AWS_ENDPOINT_URL   a local emulator instead of AWS, e.g. http://127.0.0.1:5000\n\n\
        Keys are printed once, at creation; only their SHA-256 is stored."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Creates the table with its indexes, and its secrets key with the alias
    /// alias/<TABLE_NAME>-secrets (for local emulators; deployments use the template).
    CreateTable,
    /// Seals every secret stored plain by a version before secrets were sealed (webhook
    /// secrets and signing keys, destination stream keys, recorded answers that show a
    /// secret), once, after upgrading. Needs kms:GenerateDataKey on the secrets key
    /// (SECRETS_KEY_ID, or the alias alias/<TABLE_NAME>-secrets).
    SealSecrets,
    /// Creates or renames a brand.
    CreateBrand {
        /// The brand's id, e.g. brand_acme (its keys and streams name it).
        #[arg(long)]
        id: String,
        /// The brand's display name.
        #[arg(long)]
        name: String,
        /// free, starter, growth, scale or enterprise (live keys need growth or above).
        #[arg(long, value_parser = parse_plan)]
        plan: Plan,
        /// The brand's vertical; the API serves live-commerce.
        #[arg(long, default_value = LIVE_COMMERCE)]
        vertical: String,
    },
    /// Changes a brand's plan.
    SetPlan {
        /// The brand's id.
        #[arg(long)]
        brand: String,
        /// free, starter, growth, scale or enterprise.
        #[arg(long, value_parser = parse_plan)]
        plan: Plan,
    },
    /// Sets a brand's billing cycle (docs/usage.md, "Periods") and prints its current period.
    SetBilling {
        /// The brand's id.
        #[arg(long)]
        brand: String,
        /// An IANA time zone name, e.g. Europe/Berlin.
        #[arg(long, default_value = account::DEFAULT_BILLING_TIME_ZONE)]
        time_zone: String,
        /// The day of the month, 1 to 28, each period starts on at 00:00 in that zone.
        #[arg(long, default_value_t = account::DEFAULT_BILLING_ANCHOR_DAY)]
        anchor_day: u8,
    },
    /// Creates an API key and prints it; it cannot be shown again.
    CreateKey {
        /// The brand's id.
        #[arg(long)]
        brand: String,
        /// live (real streams, growth plan or above) or test (simulated, free).
        #[arg(long, value_parser = parse_environment)]
        env: KeyEnvironment,
        /// Comma-separated: streams:read,streams:write,analytics:read,webhooks:write
        #[arg(long, value_delimiter = ',', value_parser = parse_scope)]
        scopes: Vec<Scope>,
        /// RFC 3339 expiry, e.g. 2027-01-01T00:00:00Z
        #[arg(long)]
        expires_at: Option<DateTime<Utc>>,
    },
    /// Revokes a key, given the key itself or its SHA-256 hash.
    RevokeKey {
        #[arg(long)]
        key: String,
    },
    /// Inserts or replaces a creator from a JSON file (all nine fields).
    UpsertCreator {
        #[arg(long)]
        file: String,
    },
    /// Deletes a creator; its streams then show `creator_id: null`.
    DeleteCreator {
        /// The creator's avt_ id.
        #[arg(long)]
        id: String,
    },
    /// Loads a seed file (brands, keys, creators, streams; docs/configuration.md, "Seed files").
    LoadSeed {
        /// The seed file (JSON).
        file: String,
    },
    /// Loads the local server's demo data (the demo brand, its test and live key with every
    /// scope, the creators catalog) and prints the keys: for local emulators, as `sam local`
    /// runs against (scripts/sam-local.sh).
    LoadDemo {
        /// The fixed demo keys of `local-api --fixed-demo-keys` instead of new random ones.
        #[arg(long)]
        fixed_keys: bool,
    },
    /// Events the outbox relay set aside after its attempts, with the reason.
    OutboxSetAside {
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// Puts set-aside events back in the outbox, to be relayed again: one (`--event`) or all.
    OutboxReplay {
        /// An event id (`evt_...`); every set-aside event when omitted.
        #[arg(long)]
        event: Option<String>,
    },
    /// Sends the deliveries in the delivery dead-letter queue again, each as a new delivery
    /// with its own retries: all of them, or those that failed at or after `--since`.
    /// Needs DELIVERY_QUEUE_URL and DELIVERY_DLQ_URL.
    DeliveriesReplay {
        /// An RFC 3339 time, e.g. 2026-11-22T08:00:00Z.
        #[arg(long, value_parser = parse_time)]
        since: Option<DateTime<Utc>>,
    },
}

fn parse_time(raw: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(raw)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("`{raw}` is not an RFC 3339 time, e.g. 2026-11-22T08:00:00Z"))
}

fn parse_plan(raw: &str) -> Result<Plan, String> {
    raw.parse()
}

fn parse_scope(raw: &str) -> Result<Scope, String> {
    raw.parse()
}

fn parse_environment(raw: &str) -> Result<KeyEnvironment, String> {
    match raw {
        "live" => Ok(KeyEnvironment::Live),
        "test" => Ok(KeyEnvironment::Test),
        other => Err(format!("`{other}` is not live or test")),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("admin: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn dynamo() -> Result<DynamoStore, String> {
    let table = std::env::var("TABLE_NAME")
        .ok()
        .filter(|t| !t.trim().is_empty())
        .ok_or("TABLE_NAME is not set: name the DynamoDB table to manage (see admin --help)")?;
    let config = Config::from_env(StoreKind::DynamoDb).map_err(|e| e.to_string())?;
    if config.store != StoreKind::DynamoDb {
        return Err("admin works on the DynamoDB store: unset STORE, or set STORE=dynamodb".into());
    }
    let sdk = hosting_aws::sdk_config().await.map_err(|e| e.to_string())?;
    Ok(DynamoStore::new(hosting_aws::dynamodb_client(&sdk), table))
}

/// A file's JSON, its errors naming the file.
fn read_json<T: serde::de::DeserializeOwned>(file: &str) -> Result<T, String> {
    let json = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    serde_json::from_str(&json).map_err(|e| format!("{file}: {e}"))
}

/// The delivery queue and its dead-letter queue the environment names.
async fn delivery_queues() -> Result<hosting_aws::sqs::SqsQueue, String> {
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .ok_or(format!("{name} is not set: deliveries-replay needs the delivery queue and its dead-letter queue (see admin --help)"))
    };
    let (queue, dlq) = (var("DELIVERY_QUEUE_URL")?, var("DELIVERY_DLQ_URL")?);
    let sdk = hosting_aws::sdk_config().await.map_err(|e| e.to_string())?;
    Ok(hosting_aws::sqs::SqsQueue::new(
        aws_sdk_sqs::Client::new(&sdk),
        queue,
        dlq,
    ))
}

async fn replay_deliveries(since: Option<DateTime<Utc>>) -> Result<(), String> {
    let replayed = delivery_queues()
        .await?
        .replay_dead_letters(since)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "replayed {} deliveries; kept {} that failed earlier, {} unreadable",
        replayed.replayed, replayed.kept, replayed.unreadable
    );
    Ok(())
}

/// Seals the table's plain secrets, page by page: how many were sealed, and how many changed
/// between the read and the write (left as the change made them).
async fn seal_secrets(
    store: &DynamoStore,
) -> Result<(u64, u64), hosting_domain::error::StoreError> {
    use hosting_aws::dynamodb::PlainSecretKind;
    use hosting_domain::sealed::SecretScope;
    let sdk = hosting_aws::sdk_config()
        .await
        .map_err(|e| hosting_domain::error::StoreError::Backend(e.to_string()))?;
    let key_id = std::env::var("SECRETS_KEY_ID")
        .ok()
        .filter(|id| !id.trim().is_empty())
        .unwrap_or_else(|| hosting_aws::kms::default_alias(store.table()));
    let secrets = hosting_app::secrets::Secrets::new(std::sync::Arc::new(
        hosting_aws::kms::KmsKeyVault::new(
            hosting_aws::kms::client(&sdk),
            key_id,
            store.table().to_owned(),
        ),
    ));
    let (mut sealed, mut changed, mut start) = (0, 0, None);
    loop {
        let (page, next) = store.plain_secrets(start).await?;
        for secret in page {
            let scope = match &secret.kind {
                PlainSecretKind::WebhookSecret(id) => SecretScope::WebhookSecret(id),
                PlainSecretKind::WebhookSigningKey(id, _) => SecretScope::WebhookSigningKey(id),
                PlainSecretKind::StreamKey(id) => SecretScope::StreamKey(id),
                PlainSecretKind::IdempotentAnswer(id) => SecretScope::IdempotentAnswer(id),
            };
            let value = secrets.seal(&scope, &secret.value).await?;
            if store.seal_plain_secret(&secret, &value).await? {
                sealed += 1;
            } else {
                changed += 1;
            }
        }
        match next {
            Some(next) => start = Some(next),
            None => return Ok((sealed, changed)),
        }
    }
}

async fn run(command: Command) -> Result<(), String> {
    // The queues, not the table.
    if let Command::DeliveriesReplay { since } = command {
        return replay_deliveries(since).await;
    }
    // Files first: a mistake in one is reported before anything about the environment.
    let mut demo_keys = None;
    let seed = match &command {
        Command::LoadSeed { file } => {
            let json = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
            Some(Seed::from_json(&json).map_err(|e| format!("{file}: {e}"))?)
        }
        Command::LoadDemo { fixed_keys } => {
            let demo = hosting_app::seed::demo(*fixed_keys);
            demo_keys = Some((demo.test_key, demo.live_key));
            Some(demo.seed)
        }
        _ => None,
    };
    let creator: Option<Creator> = match &command {
        Command::UpsertCreator { file } => Some(read_json(file)?),
        _ => None,
    };
    let store = dynamo().await?;
    // One line: the store's error, without the SDK's debug detail.
    let fail = |e: hosting_domain::error::StoreError| e.to_string();
    match command {
        Command::CreateTable => {
            store.create_table().await.map_err(fail)?;
            let sdk = hosting_aws::sdk_config().await.map_err(|e| e.to_string())?;
            hosting_aws::kms::ensure_table_key(&hosting_aws::kms::client(&sdk), store.table())
                .await
                .map_err(fail)?;
            println!(
                "created table {} and its secrets key {}",
                store.table(),
                hosting_aws::kms::default_alias(store.table())
            );
        }
        Command::SealSecrets => {
            let (sealed, changed) = seal_secrets(&store).await.map_err(fail)?;
            println!("sealed {sealed} secrets stored plain; {changed} had changed meanwhile");
        }
        Command::CreateBrand {
            id,
            name,
            plan,
            vertical,
        } => {
            let mut brand = Brand::new(&id, &name, plan, &vertical);
            // Renaming keeps the brand's billing cycle.
            if let Some(known) = store.get_brand(&id).await.map_err(fail)? {
                brand.billing_time_zone = known.billing_time_zone;
                brand.billing_anchor_day = known.billing_anchor_day;
            }
            store.put_brand(&brand).await.map_err(fail)?;
            println!("brand {} ({})", brand.id, brand.plan.as_str());
        }
        Command::SetPlan { brand, plan } => {
            let mut found = store
                .get_brand(&brand)
                .await
                .map_err(fail)?
                .ok_or_else(|| format!("no brand {brand}"))?;
            found.plan = plan;
            store.put_brand(&found).await.map_err(fail)?;
            println!("brand {brand} is now on {}", plan.as_str());
        }
        Command::SetBilling {
            brand,
            time_zone,
            anchor_day,
        } => {
            let cycle = BillingCycle::new(&time_zone, anchor_day).map_err(|e| e.to_string())?;
            let mut found = store
                .get_brand(&brand)
                .await
                .map_err(fail)?
                .ok_or_else(|| format!("no brand {brand}"))?;
            found.billing_time_zone = cycle.time_zone().to_owned();
            found.billing_anchor_day = cycle.anchor_day();
            store.put_brand(&found).await.map_err(fail)?;
            let period = cycle.period_containing(Utc::now());
            println!(
                "brand {brand} bills from day {anchor_day} in {}: the current period {} runs {} to {}",
                cycle.time_zone(),
                period.id(),
                period
                    .start
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                period
                    .end
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            );
        }
        Command::CreateKey {
            brand,
            env,
            scopes,
            expires_at,
        } => {
            if store.get_brand(&brand).await.map_err(fail)?.is_none() {
                return Err(format!("no brand {brand}"));
            }
            let raw = account::generate_key(env);
            let key_hash = account::hash_key(&raw);
            let key_id = account::key_id(&key_hash);
            store
                .put_api_key(&ApiKey {
                    key_hash,
                    brand_id: brand,
                    environment: env,
                    scopes,
                    revoked: false,
                    expires_at,
                })
                .await
                .map_err(fail)?;
            // The only time the key is ever shown: alone on standard output, so a script can
            // take it; its public id (not a secret) beside it, for the operator.
            println!("{raw}");
            eprintln!("key_id {key_id} (the key's public name in usage records; not a secret)");
        }
        Command::RevokeKey { key } => {
            let hash = if account::parse_key(&key).is_some() {
                account::hash_key(&key)
            } else {
                key.to_ascii_lowercase()
            };
            let mut found = store
                .find_api_key(&hash)
                .await
                .map_err(fail)?
                .ok_or("no such key")?;
            found.revoked = true;
            store.put_api_key(&found).await.map_err(fail)?;
            println!("revoked key {hash} ({})", found.key_id());
        }
        Command::UpsertCreator { .. } => {
            let creator = creator.expect("read above");
            store.put_creator(&creator).await.map_err(fail)?;
            println!("creator {}", creator.id);
        }
        Command::DeleteCreator { id } => {
            store.delete_creator(&id).await.map_err(fail)?;
            println!("deleted creator {id}");
        }
        Command::LoadSeed { file } => {
            let seed = seed.expect("read above");
            let dyn_store: &dyn Store = &store;
            seed.load(dyn_store)
                .await
                .map_err(|e| format!("{file}: {e}"))?;
            println!(
                "loaded {} brands, {} keys, {} creators, {} streams",
                seed.brands.len(),
                seed.api_keys.len(),
                seed.creators.len(),
                seed.streams.len()
            );
        }
        Command::LoadDemo { .. } => {
            let seed = seed.expect("made above");
            let dyn_store: &dyn Store = &store;
            seed.load(dyn_store).await.map_err(|e| e.to_string())?;
            let (test_key, live_key) = demo_keys.expect("made above");
            println!(
                "demo brand `{}` ({} creators), all scopes:\n  test key: {test_key}\n  live key: {live_key}",
                hosting_app::seed::DEMO_BRAND_ID,
                seed.creators.len()
            );
        }
        Command::OutboxSetAside { limit } => {
            for set_aside in store.set_aside_events(limit).await.map_err(fail)? {
                println!(
                    "{} {} brand={} stream={} attempts={} set_aside_at={} error={}",
                    set_aside.event.id,
                    set_aside.event.event_type.as_str(),
                    set_aside.event.brand_id,
                    set_aside
                        .event
                        .stream_id
                        .map_or_else(|| "-".to_owned(), |id| id.to_string()),
                    set_aside.attempts,
                    set_aside.set_aside_at.to_rfc3339(),
                    set_aside.error
                );
            }
        }
        Command::DeliveriesReplay { .. } => unreachable!("replayed before the table is opened"),
        Command::OutboxReplay { event } => {
            let ids = match event {
                Some(id) => vec![id],
                None => store
                    .set_aside_events(usize::MAX)
                    .await
                    .map_err(fail)?
                    .into_iter()
                    .map(|set_aside| set_aside.event.id)
                    .collect(),
            };
            let mut requeued = 0;
            for id in &ids {
                if store.requeue_event(id, Utc::now()).await.map_err(fail)? {
                    requeued += 1;
                } else {
                    eprintln!("admin: {id} is not set aside");
                }
            }
            println!("requeued {requeued} events");
        }
    }
    Ok(())
}
