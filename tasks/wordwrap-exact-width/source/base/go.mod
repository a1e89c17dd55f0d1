module wordwrap.example/text

go 1.19
