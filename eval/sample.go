package eval

// SampleText is the built-in evaluation text of `kvref eval`: short stories in the simple
// style of the TinyStories data set, written for kvref (not taken from the data set).
const SampleText = `Once upon a time, there was a little boy named Tim. Tim had a red ball. He liked to play with his ball in the park every day. One day, Tim saw a big dog in the park. The dog was brown and had a long tail. Tim was a little scared, but the dog wagged its tail and came to him.
"Hello, dog," said Tim. "Do you want to play with my ball?" The dog barked and jumped up and down. Tim threw the ball, and the dog ran fast to get it. The dog brought the ball back to Tim. Tim laughed and threw the ball again. They played all day in the sun.
When it was time to go home, Tim said, "Bye, dog! I will see you tomorrow." The dog barked one more time and ran to its mom. Tim went home and told his mom about his new friend. His mom smiled and gave him a big hug.

Lily was a happy girl who loved flowers. She had a small garden with red, yellow and blue flowers. Every morning, Lily gave her flowers water from a little green can. One day, she saw that one flower was sad. Its head was down and its leaves were dry.
"Oh no," said Lily. "What is wrong, little flower?" She gave the flower more water and moved it into the sun. She sang a song to the flower. The next day, the flower was standing tall. It was the most beautiful flower in the garden. Lily was very proud. She learned that when you take care of things, they can grow strong.

Ben and Sue were friends. They liked to build things with blocks. One day, they wanted to build a tall tower. Ben put a big block at the bottom. Sue put a small block on top. They put more and more blocks on the tower. The tower was very tall.
Then the cat came into the room. The cat saw the tower and wanted to play. It jumped on the tower, and the blocks fell down. Ben and Sue were sad. "Bad cat!" said Ben. But Sue said, "It is okay, Ben. The cat did not mean to be bad. We can build a new tower, even better than before." So they built a new tower together, and this time they put it on the table where the cat could not reach it.

There was a little bird who lived in a tree. The bird wanted to fly high in the sky, but it was afraid. Every day, the bird looked at the other birds flying and wished it could fly too. One day, a kind old owl came to the tree. "Why are you sad, little bird?" asked the owl.
"I want to fly, but I am scared," said the little bird. The owl said, "Everyone is scared at first. Try to fly a little bit, just to the next branch." The little bird opened its wings and jumped. It flew to the next branch! The little bird was so happy. The next day, it flew a little higher, and the day after that, it flew over the whole park. The little bird thanked the owl and sang a happy song.

Mia had a teddy bear named Bob. She took Bob everywhere she went. One day, Mia and her mom went to the store. Mia put Bob on a shelf to look at some toys. When it was time to go, she forgot Bob at the store. At home, Mia looked for Bob, but she could not find him. She started to cry.
Her mom said, "Do not worry, Mia. We will go back to the store and find Bob." They went back to the store, and there was Bob on the shelf, waiting for her. Mia hugged Bob very tight. "I will never leave you again, Bob," she said. From that day on, Mia always held Bob's hand when they went out.

Sam liked to help his dad in the kitchen. One day, they made a cake for mom. Sam put the flour and the eggs in a big bowl. Dad mixed them with a spoon. They put the cake in the oven and waited. The kitchen smelled sweet and warm. When the cake was ready, they put pink frosting on top. Mom came home and saw the cake. She was so surprised and happy. "Thank you, Sam and Dad! This is the best cake ever!" They all ate the cake together and laughed.
`
