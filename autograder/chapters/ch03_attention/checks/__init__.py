"""The checks of chapter 3: one module per stage (``s1_softmax`` .. ``s8_efficiency``) and the parts
the module stages share, lowest first: spec, diagnosis, properties, structure, policy."""
