module github.com/splitdbg/splitdbg

go 1.26.0

require (
	github.com/go-delve/delve v1.27.2
	github.com/google/go-cmp v0.7.0
	golang.org/x/arch v0.32.0
	golang.org/x/exp v0.0.0-20261014143641-f0251eb4aa3e
)

require (
	golang.org/x/sys v0.46.0 // indirect
	golang.org/x/telemetry v0.0.0-20241106142447-58a1122356f5 // indirect
)
