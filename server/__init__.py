"""Server-side services the pages use but that are not simulation: the class store (in-process or Redis)."""
