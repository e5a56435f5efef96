//go:build !race

package mcpconn_test

const raceBuild = false
