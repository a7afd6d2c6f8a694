"""What every lab's engine shares: the 2-D datasets, seeded model parts, loss histories, errors, text escaping,
threads, uploads, exports and timing a call."""
