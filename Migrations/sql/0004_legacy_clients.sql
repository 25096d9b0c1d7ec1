-- What legacy GCX clients need from a customer's pins.
--
-- customer.legacy_clients: 1 when the customer's apps include legacy GCX clients. Those clients match only
-- `fp` (certificate SHA-256) and RSA `pk` entries, so for such a customer every edit that leaves a host with
-- fewer than two pins they can use is refused.
--
-- host.published_hostname: the host name as the operator gave it, case preserved, published as the bundle's
-- `hostname` because legacy clients compare that value with the name the app connects to byte for byte.
-- NULL means the same as `hostname`. `hostname` stays the normalised (lower-case) key.
ALTER TABLE customer ADD COLUMN legacy_clients INTEGER NOT NULL DEFAULT 0 CHECK (legacy_clients IN (0, 1));

ALTER TABLE host ADD COLUMN published_hostname TEXT
    CHECK (published_hostname IS NULL OR lower(published_hostname) = hostname);
