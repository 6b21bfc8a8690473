module github.com/splitdbg/splitdbg

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0 // indirect
	golang.org/x/arch v0.32.0 // indirect
	golang.org/x/exp v0.0.0-20261014143641-f0251eb4aa3e // indirect
)
