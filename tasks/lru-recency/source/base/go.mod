module lrucache.example/cache

go 1.19
