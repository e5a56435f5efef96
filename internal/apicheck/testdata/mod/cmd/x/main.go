package main

func Main() {}

func main() {}
