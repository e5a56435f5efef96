//go:build !unix

package run_test

import "time"

// Process checks need unix signals; elsewhere they pass vacuously.
func processGone(int) bool { return true }

func groupGone(int) bool { return true }

func cpuUsage() (self, children time.Duration) { return 0, 0 }

func leftoverProcesses(string) []int { return nil }

func processesGone(string) bool { return true }

func rssMB(string) float64 { return 0 }

func processCount(string) int { return 0 }
