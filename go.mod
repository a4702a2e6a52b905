module github.com/kpemu/kpemu

go 1.26.8

require (
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/spf13/cobra v1.10.2
	golang.org/x/arch v0.33.0
	golang.org/x/sys v0.28.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
