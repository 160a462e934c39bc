"""What both instruments share: digests, errors, ledgers, bootstrap, statistics."""
