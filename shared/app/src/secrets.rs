//! Secrets at rest (docs/security.md, "Secrets at rest"): the envelope around every stored
//! secret, over the stack's key ([`KeyVault`]: KMS on AWS, [`LocalKeyVault`] on the embedded
//! backend, the same code path).
//!
//! An envelope (version 1) is `0x01`, the wrapped data key's length (2 bytes, big-endian), the
//! wrapped data key, a 12-byte random nonce, then the secret under AES-256-GCM with its 16-byte
//! tag. The additional data is the secret's [`SecretScope`], so an envelope copied onto
//! another item does not open.
//!
//! Data keys are cached per instance, bounded in time and uses: the key that seals is replaced
//! after [`SEAL_KEY_LIFETIME`] or [`SEAL_KEY_USES`] seals; an unwrapped key is kept for
//! [`OPEN_KEY_LIFETIME`] or [`OPEN_KEY_USES`] opens, [`OPEN_KEYS_KEPT`] at most. A delivery
//! therefore costs no key-service call in the steady state (BENCHMARKS.md, "Secrets at rest").

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use hosting_domain::destination::{SealedStreamKeys, StreamKeys};
use hosting_domain::error::StoreError;
use hosting_domain::ports::{KeyVault, StoreResult};
use hosting_domain::sealed::{DataKey, SecretScope, StoredSecret};

use crate::metrics::{self, Metric};

const ENVELOPE_VERSION: u8 = 1;
const TAG_LEN: usize = 16;
pub const SEAL_KEY_LIFETIME: Duration = Duration::from_secs(15 * 60);
pub const SEAL_KEY_USES: u64 = 10_000;
pub const OPEN_KEY_LIFETIME: Duration = Duration::from_secs(60 * 60);
pub const OPEN_KEY_USES: u64 = 100_000;
pub const OPEN_KEYS_KEPT: usize = 64;

struct CachedKey {
    key: Arc<LessSafeKey>,
    made: Instant,
    uses: u64,
}

struct SealingKey {
    cached: CachedKey,
    wrapped: Arc<[u8]>,
}

/// Seals and opens stored secrets; one per process, shared by every request.
pub struct Secrets {
    vault: Arc<dyn KeyVault>,
    sealing: Mutex<Option<SealingKey>>,
    opened: Mutex<HashMap<Arc<[u8]>, CachedKey>>,
    vault_calls: AtomicU64,
}

fn aes_key(plaintext: &[u8; 32]) -> Arc<LessSafeKey> {
    let unbound = UnboundKey::new(&AES_256_GCM, plaintext).expect("32 bytes is an AES-256 key");
    Arc::new(LessSafeKey::new(unbound))
}

fn unreadable() -> StoreError {
    // Never the envelope's bytes, nor which part failed beyond this.
    StoreError::Corrupt("a sealed secret does not open".into())
}

impl Secrets {
    pub fn new(vault: Arc<dyn KeyVault>) -> Self {
        Self {
            vault,
            sealing: Mutex::new(None),
            opened: Mutex::new(HashMap::new()),
            vault_calls: AtomicU64::new(0),
        }
    }

    /// Calls made to the stack's key since the process started (benchmarks, tests).
    pub fn vault_calls(&self) -> u64 {
        self.vault_calls.load(Ordering::Relaxed)
    }

    /// Drops every cached data key, as a new instance starts with none (tests of what a cold
    /// instance calls).
    pub fn forget_cached_keys(&self) {
        *self.sealing.lock().expect("sealing key lock") = None;
        self.opened.lock().expect("opened keys lock").clear();
    }

    fn counted<T>(&self, result: StoreResult<T>) -> StoreResult<T> {
        self.vault_calls.fetch_add(1, Ordering::Relaxed);
        if let Err(err) = &result {
            metrics::count(Metric::SecretKeyFailures);
            tracing::error!(error = %err, "the secrets key failed");
        }
        result
    }

    /// The data key that seals now, made when none is fresh.
    async fn sealing_key(&self) -> StoreResult<(Arc<LessSafeKey>, Arc<[u8]>)> {
        {
            let mut sealing = self.sealing.lock().expect("sealing key lock");
            if let Some(current) = sealing.as_mut()
                && current.cached.made.elapsed() < SEAL_KEY_LIFETIME
                && current.cached.uses < SEAL_KEY_USES
            {
                current.cached.uses += 1;
                return Ok((current.cached.key.clone(), current.wrapped.clone()));
            }
        }
        let DataKey { plaintext, wrapped } = self.counted(self.vault.new_data_key().await)?;
        if wrapped.len() > usize::from(u16::MAX) {
            return Err(StoreError::Backend("a wrapped data key is too long".into()));
        }
        let key = aes_key(&plaintext);
        let wrapped: Arc<[u8]> = wrapped.into();
        let now = Instant::now();
        *self.sealing.lock().expect("sealing key lock") = Some(SealingKey {
            cached: CachedKey {
                key: key.clone(),
                made: now,
                uses: 1,
            },
            wrapped: wrapped.clone(),
        });
        // What this instance seals, it opens without a call.
        self.keep_opened(wrapped.clone(), key.clone());
        Ok((key, wrapped))
    }

    fn keep_opened(&self, wrapped: Arc<[u8]>, key: Arc<LessSafeKey>) {
        let mut opened = self.opened.lock().expect("opened keys lock");
        opened.retain(|_, kept| kept.made.elapsed() < OPEN_KEY_LIFETIME);
        if opened.len() >= OPEN_KEYS_KEPT
            && let Some(oldest) = opened
                .iter()
                .min_by_key(|(_, kept)| kept.made)
                .map(|(wrapped, _)| wrapped.clone())
        {
            opened.remove(&oldest);
        }
        opened.insert(
            wrapped,
            CachedKey {
                key,
                made: Instant::now(),
                uses: 0,
            },
        );
    }

    /// The data key of an envelope, from the cache or unwrapped by the stack's key.
    async fn opening_key(&self, wrapped: &[u8]) -> StoreResult<Arc<LessSafeKey>> {
        {
            let mut opened = self.opened.lock().expect("opened keys lock");
            if let Some(kept) = opened.get_mut(wrapped) {
                if kept.made.elapsed() < OPEN_KEY_LIFETIME && kept.uses < OPEN_KEY_USES {
                    kept.uses += 1;
                    return Ok(kept.key.clone());
                }
                opened.remove(wrapped);
            }
        }
        let plaintext = self.counted(self.vault.unwrap_data_key(wrapped).await)?;
        let key = aes_key(&plaintext);
        self.keep_opened(wrapped.into(), key.clone());
        Ok(key)
    }

    /// `plaintext` sealed for `scope`.
    pub async fn seal(
        &self,
        scope: &SecretScope<'_>,
        plaintext: &str,
    ) -> StoreResult<StoredSecret> {
        let (key, wrapped) = self.sealing_key().await?;
        let mut nonce = [0u8; NONCE_LEN];
        aws_lc_rs::rand::fill(&mut nonce)
            .map_err(|_| StoreError::Backend("no random nonce".into()))?;
        let mut sealed = plaintext.as_bytes().to_vec();
        key.seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(scope.aad().as_bytes()),
            &mut sealed,
        )
        .map_err(|_| StoreError::Backend("sealing failed".into()))?;
        let mut envelope = Vec::with_capacity(3 + wrapped.len() + NONCE_LEN + sealed.len());
        envelope.push(ENVELOPE_VERSION);
        envelope.extend_from_slice(&(wrapped.len() as u16).to_be_bytes());
        envelope.extend_from_slice(&wrapped);
        envelope.extend_from_slice(&nonce);
        envelope.extend_from_slice(&sealed);
        Ok(StoredSecret::Sealed(envelope))
    }

    /// A stored secret in the clear: a plain one as it is, a sealed one opened for `scope`.
    pub async fn open(
        &self,
        scope: &SecretScope<'_>,
        stored: &StoredSecret,
    ) -> StoreResult<String> {
        let envelope = match stored {
            StoredSecret::Plain(plain) => return Ok(plain.clone()),
            StoredSecret::Sealed(envelope) => envelope,
        };
        let (wrapped, nonce, sealed) = split_envelope(envelope).ok_or_else(unreadable)?;
        let key = self.opening_key(wrapped).await?;
        let mut buffer = sealed.to_vec();
        let opened = key
            .open_in_place(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(scope.aad().as_bytes()),
                &mut buffer,
            )
            .map_err(|_| unreadable())?;
        let len = opened.len();
        buffer.truncate(len);
        String::from_utf8(buffer).map_err(|_| unreadable())
    }

    /// Each of `stored` opened for `scope`, in order.
    pub async fn open_all(
        &self,
        scope: &SecretScope<'_>,
        stored: &[&StoredSecret],
    ) -> StoreResult<Vec<String>> {
        let mut opened = Vec::with_capacity(stored.len());
        for secret in stored {
            opened.push(self.open(scope, secret).await?);
        }
        Ok(opened)
    }

    /// Each destination's stream key sealed for it.
    pub async fn seal_stream_keys(&self, keys: &StreamKeys) -> StoreResult<SealedStreamKeys> {
        let mut sealed = Vec::with_capacity(keys.0.len());
        for (destination_id, key) in &keys.0 {
            let scope = SecretScope::StreamKey(destination_id);
            sealed.push((destination_id.clone(), self.seal(&scope, key).await?));
        }
        Ok(SealedStreamKeys(sealed))
    }

    /// Each destination's stream key in the clear, to talk to the egress.
    pub async fn open_stream_keys(&self, keys: &SealedStreamKeys) -> StoreResult<StreamKeys> {
        let mut opened = Vec::with_capacity(keys.0.len());
        for (destination_id, key) in &keys.0 {
            let scope = SecretScope::StreamKey(destination_id);
            opened.push((destination_id.clone(), self.open(&scope, key).await?));
        }
        Ok(StreamKeys(opened))
    }

    /// `stored` sealed when it is plain (an item written before sealing), as it is otherwise.
    pub async fn sealed(
        &self,
        scope: &SecretScope<'_>,
        stored: &StoredSecret,
    ) -> StoreResult<StoredSecret> {
        match stored {
            StoredSecret::Plain(plain) => self.seal(scope, plain).await,
            sealed => Ok(sealed.clone()),
        }
    }
}

/// The wrapped data key, the nonce and the ciphertext with its tag; `None` when malformed.
fn split_envelope(envelope: &[u8]) -> Option<(&[u8], [u8; NONCE_LEN], &[u8])> {
    let (&version, rest) = envelope.split_first()?;
    if version != ENVELOPE_VERSION {
        return None;
    }
    let (len, rest) = rest.split_at_checked(2)?;
    let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
    let (wrapped, rest) = rest.split_at_checked(len)?;
    let (nonce, sealed) = rest.split_at_checked(NONCE_LEN)?;
    (sealed.len() >= TAG_LEN).then_some((wrapped, nonce.try_into().ok()?, sealed))
}

/// The embedded backend's stack key: an AES-256-GCM key made when the process starts, that
/// wraps data keys as KMS would. Its data lives in the same process, so the key lives exactly
/// as long as what it sealed.
pub struct LocalKeyVault {
    key: LessSafeKey,
}

impl Default for LocalKeyVault {
    fn default() -> Self {
        Self::new()
    }
}

impl LocalKeyVault {
    pub fn new() -> Self {
        let mut key = [0u8; 32];
        aws_lc_rs::rand::fill(&mut key).expect("the system's random source");
        let unbound = UnboundKey::new(&AES_256_GCM, &key).expect("32 bytes is an AES-256 key");
        Self {
            key: LessSafeKey::new(unbound),
        }
    }
}

const LOCAL_WRAP_AAD: &[u8] = b"hosting local data key";

#[async_trait]
impl KeyVault for LocalKeyVault {
    async fn new_data_key(&self) -> StoreResult<DataKey> {
        let mut plaintext = [0u8; 32];
        let mut nonce = [0u8; NONCE_LEN];
        aws_lc_rs::rand::fill(&mut plaintext)
            .and_then(|()| aws_lc_rs::rand::fill(&mut nonce))
            .map_err(|_| StoreError::Backend("no random data key".into()))?;
        let mut wrapped = plaintext.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(LOCAL_WRAP_AAD),
                &mut wrapped,
            )
            .map_err(|_| StoreError::Backend("wrapping failed".into()))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&wrapped);
        Ok(DataKey {
            plaintext,
            wrapped: out,
        })
    }

    async fn unwrap_data_key(&self, wrapped: &[u8]) -> StoreResult<[u8; 32]> {
        let (nonce, sealed) = wrapped.split_at_checked(NONCE_LEN).ok_or_else(unreadable)?;
        let nonce: [u8; NONCE_LEN] = nonce.try_into().map_err(|_| unreadable())?;
        let mut buffer = sealed.to_vec();
        let plain = self
            .key
            .open_in_place(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(LOCAL_WRAP_AAD),
                &mut buffer,
            )
            .map_err(|_| unreadable())?;
        plain.try_into().map_err(|_| unreadable())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> Secrets {
        Secrets::new(Arc::new(LocalKeyVault::new()))
    }

    #[tokio::test]
    async fn a_sealed_secret_opens_for_its_scope_only() {
        let secrets = secrets();
        let id = uuid::Uuid::new_v4();
        let other = uuid::Uuid::new_v4();
        let sealed = secrets
            .seal(&SecretScope::WebhookSecret(&id), "whsec_abc")
            .await
            .unwrap();
        let StoredSecret::Sealed(bytes) = &sealed else {
            panic!("sealed")
        };
        assert!(!bytes.windows(9).any(|w| w == b"whsec_abc"));
        assert_eq!(
            secrets
                .open(&SecretScope::WebhookSecret(&id), &sealed)
                .await
                .unwrap(),
            "whsec_abc"
        );
        for scope in [
            SecretScope::WebhookSecret(&other),
            SecretScope::WebhookSigningKey(&id),
        ] {
            assert!(matches!(
                secrets.open(&scope, &sealed).await,
                Err(StoreError::Corrupt(_))
            ));
        }
        // A flipped bit anywhere is refused.
        let mut tampered = bytes.clone();
        let last = tampered.len() - 1;
        tampered[last] ^= 1;
        assert!(
            secrets
                .open(
                    &SecretScope::WebhookSecret(&id),
                    &StoredSecret::Sealed(tampered)
                )
                .await
                .is_err()
        );
        assert!(
            secrets
                .open(
                    &SecretScope::WebhookSecret(&id),
                    &StoredSecret::Sealed(vec![1, 0])
                )
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn data_keys_are_cached_so_opening_costs_no_call_in_the_steady_state() {
        let vault = Arc::new(LocalKeyVault::new());
        let sealer = Secrets::new(vault.clone());
        let id = uuid::Uuid::new_v4();
        let scope = SecretScope::WebhookSecret(&id);
        let sealed = sealer.seal(&scope, "whsec_x").await.unwrap();
        sealer.seal(&scope, "whsec_y").await.unwrap();
        assert_eq!(sealer.vault_calls(), 1);
        // Another instance opens it: one unwrap, then none.
        let opener = Secrets::new(vault);
        for _ in 0..1_000 {
            assert_eq!(opener.open(&scope, &sealed).await.unwrap(), "whsec_x");
        }
        assert_eq!(opener.vault_calls(), 1);
    }

    #[tokio::test]
    async fn a_plain_secret_is_used_as_stored_and_sealed_on_request() {
        let secrets = secrets();
        let id = uuid::Uuid::new_v4();
        let scope = SecretScope::WebhookSecret(&id);
        let plain = StoredSecret::Plain("whsec_old".into());
        assert_eq!(secrets.open(&scope, &plain).await.unwrap(), "whsec_old");
        let sealed = secrets.sealed(&scope, &plain).await.unwrap();
        assert!(sealed.is_sealed());
        assert_eq!(secrets.open(&scope, &sealed).await.unwrap(), "whsec_old");
    }

    #[tokio::test]
    async fn another_vaults_envelope_does_not_open() {
        let id = uuid::Uuid::new_v4();
        let scope = SecretScope::WebhookSecret(&id);
        let sealed = secrets().seal(&scope, "whsec_x").await.unwrap();
        assert!(matches!(
            secrets().open(&scope, &sealed).await,
            Err(StoreError::Corrupt(_))
        ));
    }
}
