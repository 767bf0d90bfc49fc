"""The commands of cluster/gemmlab_cluster.py, one module per audience: student.py (a student's
commands and the grading job of a hand-in), course.py (the staff's set-up), decisions.py (the
staff's decisions about one student), sweep.py (sweeps and their gradebook) and pages.py (the
similarity report and the leaderboard); common.py holds what several of them need. The entry point's
table (COMMANDS) says which function carries out which command, and loads its module when it runs.
"""
