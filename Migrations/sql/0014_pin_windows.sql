-- Publish windows of pins (PinWindow): a pin may carry the first second a signing pass publishes it
-- (window_not_before) and the first second it no longer does (window_not_after), whole seconds since 1970 UTC like
-- pin.not_after (which stays the certificate's expiry).
--
-- withheld is 1 while the pin is stored but not part of the customer's content: outside its window when the content
-- was last made. A pass that finds a pin's window entering or leaving flips it and gives the customer a new content
-- version in the same transaction (ChangeRecorder), so a version always names one set of listed pins.
ALTER TABLE pin ADD COLUMN window_not_before INTEGER;
ALTER TABLE pin ADD COLUMN window_not_after INTEGER
    CHECK (window_not_after IS NULL OR window_not_before IS NULL OR window_not_before < window_not_after);
ALTER TABLE pin ADD COLUMN withheld INTEGER NOT NULL DEFAULT 0 CHECK (withheld IN (0, 1));

-- Each pass looks only at pins with a window.
CREATE INDEX pin_with_window ON pin (host_id) WHERE window_not_before IS NOT NULL OR window_not_after IS NOT NULL;
