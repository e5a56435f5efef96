package nested

func Other() {}
