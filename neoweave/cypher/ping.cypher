// Health check: the store answers a trivial read.
RETURN 1 AS ok
