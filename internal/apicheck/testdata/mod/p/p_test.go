package p

func TestOnly() {}
