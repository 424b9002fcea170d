"""The checks of chapter 3: one module per stage (``s1_softmax`` .. ``s8_efficiency``, each ending
with its ``STAGE``) and the parts the module stages share, lowest first: :mod:`.spec` (the module
contract and the grader's weights), :mod:`.diagnosis` (naming the known mistake a wrong output
matches), :mod:`.properties` (what every right attention module does), :mod:`.structure` and
:mod:`.policy` (no library attention where a stage teaches it).
"""
