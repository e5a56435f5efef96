package q

func Hidden() {}
