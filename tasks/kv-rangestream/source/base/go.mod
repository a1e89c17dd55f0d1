module kvstore.example/kv

go 1.19
