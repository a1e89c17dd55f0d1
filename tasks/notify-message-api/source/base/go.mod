module notify.example/ops

go 1.19
